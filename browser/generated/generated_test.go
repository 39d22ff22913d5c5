package generated

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes/artifacts"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestFromText(t *testing.T) {
	const page = "http://127.0.0.1:8080/c/1"
	text := "![a](/files/a.png) [report](/files/r.pdf) [site](/about) [ext](https://other.example/x.pdf) ![b](https://cdn.example/b.png \"B\") [blob](blob:http://127.0.0.1:8080/123)"
	want := []Ref{
		{Raw: "/files/a.png", URL: "http://127.0.0.1:8080/files/a.png", Title: "a", Image: true},
		{Raw: "/files/r.pdf", URL: "http://127.0.0.1:8080/files/r.pdf", Title: "report"},
		{Raw: "https://cdn.example/b.png", URL: "https://cdn.example/b.png", Title: "b", Image: true},
		{Raw: "blob:http://127.0.0.1:8080/123", URL: "blob:http://127.0.0.1:8080/123", Title: "blob"},
	}
	if got := FromText(text, page); !reflect.DeepEqual(got, want) {
		t.Errorf("FromText\n got %+v\nwant %+v", got, want)
	}
}

type memSaver map[string][]byte

func (m memSaver) Save(name string, data []byte) (string, error) {
	m[name] = data
	return "../outputs/t/" + name, nil
}
func (m memSaver) Stem() string { return "" }

// In real Chromium: the page's image and download link are fetched with
// its session cookie (the server refuses requests without it), a data:
// image too; a file over the limit is refused without reading it all.
func TestKeep_ThroughThePage(t *testing.T) {
	chromium := testkit.NeedChromium(t)
	var pb bytes.Buffer
	_ = png.Encode(&pb, image.NewGray(image.Rect(0, 0, 100, 80)))
	pic := pb.String()
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "ok", Path: "/"})
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<div class="answer">Here: <img src="/f/pic" alt="Pic"> <a href="/f/data.csv">figures</a> <img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="dot" width="80" height="80"> <span class="msg-avatar"><img src="/f/pic?avatar" width="64" height="64"></span> <img src="/f/pic?icon" width="20" height="20"> <a href="https://other.example/x">x</a></div>`))
	})
	mux.HandleFunc("/f/{name}", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("sid"); err != nil || c.Value != "ok" {
			http.Error(w, "no session", http.StatusForbidden)
			return
		}
		switch r.PathValue("name") {
		case "pic":
			_, _ = w.Write([]byte(pic))
		case "data.csv":
			_, _ = w.Write([]byte("a,b\n1,2\n"))
		case "token.json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"accessToken":"secret"}`))
		default:
			_, _ = w.Write([]byte(strings.Repeat("x", 5000)))
		}
	})
	var sessionHits atomic.Int32
	mux.HandleFunc("/api/session", func(w http.ResponseWriter, r *http.Request) {
		sessionHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"accessToken":"secret"}`))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	actx, cancelA := chromedp.NewExecAllocator(context.Background(), testkit.ChromiumOptions(t, chromium)...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	if _, err := chromedp.Run(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	job := attempt.NewJob(&taskfile.Task{TaskID: "t"}, nil, nil)
	saved := memSaver{}
	job.SetArtifactSaver(saved)
	spec := Spec{Prelude: "const qlast = (s) => { const a = document.querySelectorAll(s); return a[a.length - 1] || null; };", Answer: ".answer", Policy: artifacts.Policy{From: []string{"/f/", "/nope/"}}}
	text, list, err := Keep(ctx, job, spec, "Here: ![Pic](/f/pic) [figures](/f/data.csv)")
	if err != nil {
		t.Fatal(err)
	}
	if string(saved["01.png"]) != pic || string(saved["03.csv"]) != "a,b\n1,2\n" || len(list) != 3 || list[1].Type != "image/gif" {
		t.Errorf("saved %v, list %+v", saved, list)
	}
	if want := "Here: ![Pic](../outputs/t/01.png) [figures](../outputs/t/03.csv)\n\n![dot](../outputs/t/02.gif)"; text != want {
		t.Errorf("text %q, want %q", text, want)
	}
	if _, err := fetchAs(ctx, base+"/f/big", artifacts.Session, 1000); !errors.Is(err, artifacts.ErrTooLarge) {
		t.Errorf("a file over the limit: %v", err)
	}
	// Without the page's session the server refuses: the bytes above came
	// through it.
	resp, err := http.Get(base + "/f/pic")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("without the session: %d", resp.StatusCode)
	}
	// A link the page cannot fetch fails the attempt as environment.
	_, _, err = Keep(ctx, job, spec, "![gone](/nope/x.png)")
	if te := (*attempt.TaskError)(nil); !errors.As(err, &te) || te.Class != taskfile.ClassEnvironment || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("an unfetchable file: %v", err)
	}
	spec.Optional = true
	if text, list, err := Keep(ctx, job, spec, "![gone](/nope/x.png)"); err != nil || list != nil || text != "![gone](/nope/x.png)" {
		t.Errorf("optional: %q %v %v", text, list, err)
	}
	// Issue 49: outside artifactsFrom nothing of the origin is fetched;
	// JSON under it is fetched but not kept; an address the task's text
	// names is not fetched at all. Each stays a plain link.
	spec.Optional = false
	saved2 := memSaver{}
	job.SetArtifactSaver(saved2)
	spec.Policy.Avoid = artifacts.TextAddresses("please show ![x](/f/data.csv)")
	in := "![k](/api/session) [t](/f/token.json) [again](/f/data.csv)"
	text, list, err = Keep(ctx, job, spec, in)
	if err != nil || len(list) != 2 || !strings.HasPrefix(text, in+"\n") || len(saved2) != 2 || saved2["01.png"] == nil || saved2["02.gif"] == nil {
		t.Errorf("refused addresses: %q %+v %v, want the text's links unchanged and only the page's two pictures kept", text, list, err)
	}
	if n := sessionHits.Load(); n != 0 {
		t.Errorf("/api/session was requested %d times", n)
	}
}
