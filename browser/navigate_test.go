//go:build linux

package browser

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/examples/chatstand"
)

// Issue 55: a page is ready when its input is. The stand-in's page
// carries an async analytics script, an ad frame and a pixel from
// another origin that never answers, so the page never fires its load
// event: a task still opens the page, sends and reads its answer, well
// inside a page-load limit it would otherwise wait out.
func TestDriver_OpenWithHangingThirdParty(t *testing.T) {
	needChromium(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	hang := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // never answers while the test runs
		case <-done:
		case <-r.Context().Done():
		}
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hang.Serve(ln) }()
	t.Cleanup(func() { close(done); _ = hang.Close() })
	stand, err := chatstand.Start(chatstand.Options{Scale: 0.01, Renderer: "marked", SignedIn: "demo", ThirdParty: "http://" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stand.Close() })
	ctx := tab(t)
	log := &syncBuf{}
	d := newDriver(mdSite(t, stand.URL()), "standin-md", Timings{Quiet: 150 * time.Millisecond, PageLoad: 8 * time.Second, Start: 10 * time.Second}, slogTo(log))
	a, err := ask(ctx, t, d, "hello behind a slow ad")
	if err != nil || !strings.Contains(a.Text, "hello behind a slow ad") {
		t.Fatalf("got %q, %v; want the answer\nlog:\n%s", a.Text, err, log)
	}
}
