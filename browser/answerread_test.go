//go:build linux

package browser

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// readSite is the read page's site: done is its action bar, network its
// SSE stream, copy the answer's copy button, chrome the code header.
func readSite(url string) (config.SiteConfig, readSpec) {
	site := config.SiteConfig{URL: url, Input: ".input", Send: "button.send", Answer: ".msg.assistant", Busy: "button.stop"}
	rs := readSpec{done: ".actions", copy: ".actions button.copy", errorTurn: "button.retry", chrome: []string{".code-head"},
		network: &NetSpec{URL: "/api/chat", Format: NetSSE, Path: "choices.0.delta.content"}}
	return site, rs
}

func readDriver(t *testing.T, url string, methods []string, log *syncBuf) *driver {
	site, rs := readSite(url)
	rs.methods = methods
	d := newDriver(site, "read", Timings{Quiet: 150 * time.Millisecond, PageLoad: 10 * time.Second, Start: 10 * time.Second}, slogTo(log))
	d.rs = rs
	return d
}

func ask(ctx context.Context, t *testing.T, d *driver, msg string) (Answer, error) {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return d.chat(cctx, &config.ModelConfig{Name: "read", Site: "read"}, &taskfile.Task{TaskID: "read", Content: msg})
}

// Every method returns the whole answer as the server streamed it (its
// Markdown element for element; text: the visible text exactly), also
// when the answer shrinks at its end (a link, then rendered).
func TestDriver_ReadAnswer_Methods(t *testing.T) {
	p := startReadPage(t)
	ctx := tab(t)
	names := make([]string, 0, len(readCorpus))
	for n := range readCorpus {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, m := range []string{MethodNetwork, MethodCopy, MethodDOM, MethodText} {
		for _, n := range names {
			msg, md := n+" by "+m, readCorpus[n]
			if m == MethodCopy && n == "code" {
				msg += " [[exec]]" // the page copies with execCommand('copy')
			}
			p.set(msg, md)
			log := &syncBuf{}
			d := readDriver(t, p.url, []string{m}, log)
			a, err := ask(ctx, t, d, msg)
			if err != nil {
				t.Fatalf("%s: %v\nlog:\n%s", msg, err, log)
			}
			if a.Method != m {
				t.Fatalf("%s: read by %s (%v), want %s\nlog:\n%s", msg, a.Method, a.Fallbacks, m, log)
			}
			if a.Check.State != CheckVerified {
				t.Errorf("%s: resultCheck %s %s, want verified", msg, a.Check.State, a.Check.Diff)
			}
			switch m {
			case MethodText:
				vis := innerTextNoCodeUI(ctx, t, `document.querySelector('.turn:last-child .msg.assistant')`)
				if a.Format != FormatText || a.Text != strings.TrimSpace(vis) {
					t.Errorf("%s: %s %q, want the visible text %q", msg, a.Format, a.Text, vis)
				}
			case MethodNetwork, MethodCopy:
				if a.Format != FormatMarkdown || a.Text != md {
					t.Errorf("%s: %s %q, want the streamed Markdown %q", msg, a.Format, a.Text, md)
				}
			default:
				if a.Format != FormatMarkdown {
					t.Errorf("%s: format %s", msg, a.Format)
				}
				assertSameMarkdown(t, msg, a.Text, md)
			}
			if want := SignalDone; m != MethodNetwork && a.EndedBy != want && a.EndedBy != SignalNetwork {
				t.Errorf("%s: ended by %q, want a positive signal", msg, a.EndedBy)
			}
		}
	}
}

// The order falls back: a network pattern nothing matches, then a copy
// button that is not there: the answer comes from the DOM, and the log
// says why each better method did not deliver.
func TestDriver_ReadAnswer_Fallback(t *testing.T) {
	p := startReadPage(t)
	ctx := tab(t)
	md := readCorpus["changelog"]
	p.set("fall back", md)
	log := &syncBuf{}
	d := readDriver(t, p.url, []string{MethodNetwork, MethodCopy, MethodDOM, MethodText}, log)
	d.rs.network.URL = "/nothing/matches"
	d.rs.copy = ".no-such-button"
	a, err := ask(ctx, t, d, "fall back")
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log)
	}
	if a.Method != MethodDOM || len(a.Fallbacks) != 2 {
		t.Fatalf("method %s, fallbacks %q; want dom after network and copy", a.Method, a.Fallbacks)
	}
	assertSameMarkdown(t, "fallback", a.Text, md)
	for _, want := range []string{"reading the answer by network failed", "reading the answer by copy failed"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
}

// A pause longer than quiet while the done signal is absent does not end
// the answer; a site with no positive signal (quiet alone) ends early
// there, which is why check says so.
func TestDriver_ReadAnswer_Pause(t *testing.T) {
	p := startReadPage(t)
	ctx := tab(t)
	md := readCorpus["changelog"]
	for _, c := range []struct {
		name     string
		positive bool
	}{{"done", true}, {"network", true}, {"quiet", false}} {
		msg := "pause " + c.name + " [[pause=600ms]]"
		p.set(msg, md)
		log := &syncBuf{}
		d := readDriver(t, p.url, []string{MethodText}, log)
		switch c.name {
		case "done":
			d.rs.network = nil
		case "network":
			d.rs.done = ""
		case "quiet":
			d.rs.network, d.rs.done = nil, ""
			d.site.Busy = "" // a site that names no busy either: quiet decides alone
		}
		a, err := ask(ctx, t, d, msg)
		if err != nil {
			t.Fatalf("%s: %v\nlog:\n%s", c.name, err, log)
		}
		whole := strings.HasSuffix(a.Text, "full changelog.")
		if c.positive != whole {
			t.Errorf("%s: whole answer %v (ended by %s), want %v: %q", c.name, whole, a.EndedBy, c.positive, a.Text)
		}
	}
}

// TestDriver_ReadAnswer_TypedOut: a page that types its answer out after
// the response's last byte (busy already gone, no done signal: nlux) and
// stalls half-way for longer than netSettle is still writing: it is read
// once it has caught up with what the response carried, not at the stall
// (CI read nlux "Third line," without "last." when its renderer stalled).
func TestDriver_ReadAnswer_TypedOut(t *testing.T) {
	p := startReadPage(t)
	ctx := tab(t)
	md := readCorpus["changelog"]
	for _, m := range []string{MethodDOM, MethodText} {
		msg := "[[typeout=400ms]] by " + m
		p.set(msg, md)
		log := &syncBuf{}
		d := readDriver(t, p.url, []string{m}, log)
		d.rs.done = ""
		d.t.Quiet = 2 * time.Second // the stall is shorter than the site's quiet, longer than netSettle
		a, err := ask(ctx, t, d, msg)
		if err != nil {
			t.Fatalf("%s: %v\nlog:\n%s", m, err, log)
		}
		if !strings.HasSuffix(a.Text, "full changelog.") && !strings.HasSuffix(a.Text, "changelog).") {
			t.Errorf("%s: read %q (ended by %s), want the whole answer\nlog:\n%s", m, a.Text, a.EndedBy, log)
		}
		if m == MethodDOM {
			assertSameMarkdown(t, m, a.Text, md)
		}
	}
}

// An error turn and an empty answer fail the attempt as transient with
// the page's text; a replaced answer element is read whole.
func TestDriver_ReadAnswer_Failures(t *testing.T) {
	p := startReadPage(t)
	ctx := tab(t)
	log := &syncBuf{}
	d := readDriver(t, p.url, []string{MethodNetwork, MethodCopy, MethodDOM, MethodText}, log)
	_, err := ask(ctx, t, d, "[[error]] hello")
	if attempt.Classify(err) != taskfile.ClassTransient || !strings.Contains(err.Error(), "Something went wrong. Please try again.") {
		t.Errorf("error turn: %v, want transient with the page's text\nlog:\n%s", err, log)
	}
	_, err = ask(ctx, t, d, "[[empty]] hello")
	if attempt.Classify(err) != taskfile.ClassTransient || !strings.Contains(err.Error(), "empty text") || !strings.Contains(err.Error(), "the page reads") {
		t.Errorf("empty: %v, want transient: empty text, with the page's text\nlog:\n%s", err, log)
	}
	md := readCorpus["table"]
	p.set("[[replace]] t", md)
	d.rs.methods = []string{MethodDOM}
	a, err := ask(ctx, t, d, "[[replace]] t")
	if err != nil {
		t.Fatal(err)
	}
	assertSameMarkdown(t, "replaced", a.Text, md)
}

var _ = slog.Default

// The body a slow machine reads (getResponseBody: the response was in
// before streaming it took) is the bytes the server sent: Chromium's
// text of a charset-less stream (decoded as windows-1252) is turned back
// into them, and a stream that declares UTF-8 is read as it is. CJK and
// emoji arrive split inside a character.
func TestDriver_ReadAnswer_BodyFallback(t *testing.T) {
	p := startReadPage(t)
	ctx := tab(t)
	md := readCorpus["cjk"]
	for _, ctype := range []string{"text/event-stream", "text/event-stream; charset=utf-8", "text/event-stream; charset=windows-1252"} {
		msg := "fallback " + ctype
		p.mu.Lock()
		p.ctype = ctype
		p.mu.Unlock()
		p.set(msg, md)
		log := &syncBuf{}
		d := readDriver(t, p.url, []string{MethodNetwork}, log)
		d.netBodyOnly = true
		a, err := ask(ctx, t, d, msg)
		if err != nil {
			t.Fatalf("%s: %v\nlog:\n%s", ctype, err, log)
		}
		if a.Method != MethodNetwork || a.Text != md {
			t.Errorf("%s: %s %q, want the streamed Markdown %q\nlog:\n%s", ctype, a.Method, a.Text, md, log)
		}
		if !strings.Contains(log.String(), "read the body with getResponseBody") {
			t.Errorf("%s: the body was not read by getResponseBody (the seam did not take):\n%s", ctype, log)
		}
	}
}

// A page that shows something else than it streamed: the network result
// is kept but marked differs, with where; the next method (dom) gives
// what the page shows, verified; with verify: strict the attempt fails
// as transient.
// A page method's read at the response's end can come before the page's
// final render (the page shows the source while it streams; CI saw a
// loaded renderer a moment late): the check then finds the difference,
// and the same method, read again once the page held still, gives what
// the page settled on, verified. The page renders right after the read.
func TestDriver_ReadAnswer_LateRender(t *testing.T) {
	p := startReadPage(t)
	ctx := tab(t)
	md := readCorpus["cjk"]
	for _, m := range []string{MethodText, MethodDOM} {
		msg := "[[late]] by " + m
		p.set(msg, md)
		log := &syncBuf{}
		d := readDriver(t, p.url, []string{m}, log)
		d.afterRead = func(ctx context.Context) {
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!(window.renderNow && (window.renderNow(), true))`)); err != nil {
				t.Errorf("render: %v", err)
			}
		}
		a, err := ask(ctx, t, d, msg)
		if err != nil {
			t.Fatalf("%s: %v\nlog:\n%s", m, err, log)
		}
		if a.Method != m || a.Check.State != CheckVerified || strings.Contains(a.Text, "## ") == (m == MethodText) {
			t.Errorf("%s: read by %s, %s (%s): %q; want %s, verified, the rendered answer\nlog:\n%s", m, a.Method, a.Check.State, a.Check.Diff, a.Text, m, log)
		}
	}
}

// TestDriver_ReadAnswer_ShownLate: the page's answer element is empty
// when the result has been read (a page that renders after its stream
// ended, on a busy machine) and fills 800 ms later: the check waits for
// it and verifies, where it used to give up at once as unchecked.
func TestDriver_ReadAnswer_ShownLate(t *testing.T) {
	p := startReadPage(t)
	ctx := tab(t)
	md := readCorpus["cjk"]
	msg := "shown late"
	p.set(msg, md)
	log := &syncBuf{}
	d := readDriver(t, p.url, []string{MethodNetwork}, log)
	d.afterRead = func(ctx context.Context) {
		const hide = `(() => { const all = document.querySelectorAll('.msg.assistant'); const a = all[all.length - 1];
			const h = a.innerHTML; a.innerHTML = ''; setTimeout(() => { a.innerHTML = h; }, 800); return true; })()`
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](hide)); err != nil {
			t.Errorf("hide: %v", err)
		}
	}
	a, err := ask(ctx, t, d, msg)
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log)
	}
	if a.Method != MethodNetwork || a.Check.State != CheckVerified {
		t.Errorf("read by %s, %s (%s); want network, verified\nlog:\n%s", a.Method, a.Check.State, a.Check.Diff, log)
	}
}

func TestDriver_ReadAnswer_Differs(t *testing.T) {
	p := startReadPage(t)
	ctx := tab(t)
	md := readCorpus["cjk"]
	for _, c := range []struct {
		name    string
		methods []string
		strict  bool
		method  string
		check   string
	}{
		{"network alone", []string{MethodNetwork, MethodText}, false, MethodNetwork, CheckDiffers},
		{"network, then dom", []string{MethodNetwork, MethodDOM, MethodText}, false, MethodDOM, CheckVerified},
		{"strict", []string{MethodNetwork, MethodText}, true, "", ""},
	} {
		msg := "[[lie]] " + c.name
		p.set(msg, md)
		log := &syncBuf{}
		d := readDriver(t, p.url, c.methods, log)
		d.rs.strict = c.strict
		a, err := ask(ctx, t, d, msg)
		if c.strict {
			if class := attempt.Classify(err); class != taskfile.ClassTransient || err == nil || !strings.Contains(err.Error(), "differs from the page (verify: strict)") {
				t.Errorf("%s: err %v (%s), want a transient failure naming the difference", c.name, err, class)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v\nlog:\n%s", c.name, err, log)
		}
		if a.Method != c.method || a.Check.State != c.check {
			t.Errorf("%s: read by %s, %s (%s); want %s, %s\nlog:\n%s", c.name, a.Method, a.Check.State, a.Check.Diff, c.method, c.check, log)
		}
		if c.check == CheckDiffers && (a.Text != md || !strings.Contains(a.Check.Diff, `the result reads "发布说明`) || !strings.Contains(a.Check.Diff, `the page "发布说名`)) {
			t.Errorf("%s: kept %q with diff %q; want the streamed answer and where it parts", c.name, a.Text, a.Check.Diff)
		}
		if c.check == CheckVerified && !strings.Contains(a.Text, "说名") {
			t.Errorf("%s: %q, want what the page shows", c.name, a.Text)
		}
	}
}
