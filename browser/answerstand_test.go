//go:build linux

package browser

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/config"
)

// mdSite is the modern stand-in page's site, standin-md, with the
// reading keys of issue 18 (the README's worked example): roles, labels
// and data attributes only, so they hold with random class names too.
func mdSite(t *testing.T, url string) config.SiteConfig {
	t.Helper()
	cfg, err := config.ParseConfig([]byte("sites:\n" + testkit.StandinMarkdownSite(url)))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Sites["standin-md"]
}

// standTab starts the stand-in (time scaled by 0.002) and a tab of its
// own Chromium signed in to it as demo.
func standTab(t *testing.T) (*chatstand.Server, context.Context) {
	t.Helper()
	needChromium(t)
	stand, err := chatstand.Start(chatstand.Options{Scale: 0.002})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stand.Close() })
	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(stand.URL()+"login?user=demo")); err != nil {
		t.Fatal(err)
	}
	return stand, ctx
}

// askByNetwork sends msg on the stand-in's Markdown page (site, its
// network key net), read by network alone; the driver stays on the
// finished page for the other methods.
func askByNetwork(ctx context.Context, t *testing.T, site config.SiteConfig, net config.SiteNetwork, msg string) (*driver, Answer) {
	t.Helper()
	log := &syncBuf{}
	site.Network = &net
	d := newDriver(site, "standin-md", Timings{Quiet: 150 * time.Millisecond, PageLoad: 10 * time.Second, Start: 10 * time.Second}, slogTo(log))
	d.rs.methods = []string{MethodNetwork}
	a, err := ask(ctx, t, d, msg)
	if err != nil {
		t.Fatalf("%s: %v\nlog:\n%s", msg, err, log)
	}
	return d, a
}

// The corpus through each renderer of the stand-in, in one browser: each
// answer is read by every method on the same finished page. network and
// copy give the streamed Markdown exactly; dom gives the same Markdown
// elements (README: the normalisation); text gives the visible text
// exactly. Then the stream variants: whole-text-so-far events (mode
// full) and an answer shown raw while it streams (it shrinks at the end).
func TestDriver_ReadAnswer_Standin(t *testing.T) {
	stand, ctx := standTab(t)
	type variant struct {
		query string
		net   config.SiteNetwork
	}
	delta := config.SiteNetwork{URL: "/api/conversation", Format: config.NetSSE, Path: "delta"}
	full := config.SiteNetwork{URL: "/api/conversation", Format: config.NetSSE, Path: "text", Mode: config.NetFull}
	runs := map[string]variant{}
	for _, r := range chatstand.Renderers {
		if r != "plain" {
			runs[r] = variant{"?renderer=" + r, delta}
		}
	}
	runs["marked, full text events"] = variant{"?renderer=marked&stream=full", full}
	runs["react-markdown, raw while streaming"] = variant{"?renderer=react-markdown&raw=1", delta}
	runs["markdown-it, random classes"] = variant{"?renderer=markdown-it&classes=random", delta}
	for name, v := range runs {
		corpus := chatstand.Corpus()
		if strings.Contains(name, ",") {
			corpus = []string{"release-notes", "table-end", "go-code"} // the variants: the answers they are about
		}
		for _, c := range corpus {
			if _, ok := chatstand.CorpusAnswer(c); !ok {
				t.Fatalf("no corpus answer %s", c)
			}
			msg := "[[md=" + c + "]] " + name
			want := chatstand.MarkdownFor(msg)
			d, a := askByNetwork(ctx, t, mdSite(t, stand.URL()+v.query), v.net, msg)
			if a.Method != MethodNetwork || a.Text != want || (a.EndedBy != SignalNetwork && a.EndedBy != SignalDone) {
				t.Errorf("%s: network: by %s, ended by %s: %q, want %q", msg, a.Method, a.EndedBy, a.Text, want)
			}
			// The same finished page, read by each other method.
			for _, m := range []string{MethodCopy, MethodDOM, MethodText} {
				got, format, _, err := d.readOne(ctx, m, nil, nil)
				if err != nil {
					t.Errorf("%s: %s: %v", msg, m, err)
					continue
				}
				got = strings.TrimSpace(got)
				switch m {
				case MethodCopy:
					if got != want {
						t.Errorf("%s: copy: %q, want %q", msg, got, want)
					}
				case MethodDOM:
					if format != FormatMarkdown {
						t.Errorf("%s: dom format %s", msg, format)
					}
					assertSameMarkdown(t, msg+": dom", got, want)
				case MethodText:
					vis := innerTextNoCodeUI(ctx, t, `[...document.querySelectorAll("[data-message-author-role='assistant']")].pop()`)
					if got != strings.TrimSpace(vis) || format != FormatText {
						t.Errorf("%s: text: %q, want the visible text %q", msg, got, vis)
					}
				}
			}
		}
	}
}

// The stand-in's own failure turns and a pause, by the driver: the error
// turn and the empty answer fail with the page's text; a pause longer
// than quiet with the done bar absent gives the whole answer.
func TestDriver_ReadAnswer_StandinTurns(t *testing.T) {
	stand, ctx := standTab(t)
	newD := func(methods ...string) (*driver, *syncBuf) {
		log := &syncBuf{}
		d := newDriver(mdSite(t, stand.URL()+"?renderer=marked"), "standin-md", Timings{Quiet: 150 * time.Millisecond, PageLoad: 10 * time.Second, Start: 10 * time.Second}, slogTo(log))
		if len(methods) > 0 {
			d.rs.methods = methods
		}
		return d, log
	}
	d, log := newD()
	_, err := ask(ctx, t, d, "[[errorturn]] hi")
	if err == nil || !strings.Contains(err.Error(), "Something went wrong while generating the response.") || !strings.Contains(err.Error(), "error turn") {
		t.Errorf("error turn: %v\nlog:\n%s", err, log)
	}
	d, log = newD()
	_, err = ask(ctx, t, d, "[[empty]] hi")
	if err == nil || !strings.Contains(err.Error(), "empty text") {
		t.Errorf("empty: %v\nlog:\n%s", err, log)
	}
	for _, m := range []string{MethodDOM, MethodCopy} {
		d, log = newD(m)
		d.rs.network = nil // done alone is the proof
		msg := "[[md=release-notes]] [[pause=1s]] " + m
		a, err := ask(ctx, t, d, msg)
		if err != nil {
			t.Fatalf("pause: %v\nlog:\n%s", err, log)
		}
		if want := chatstand.MarkdownFor(msg); m == MethodCopy && a.Text != want || a.EndedBy != SignalDone {
			t.Errorf("pause by %s: ended by %s: %q, want %q", m, a.EndedBy, a.Text, want)
		} else if m == MethodDOM {
			assertSameMarkdown(t, "pause", a.Text, want)
		}
	}
	_ = context.Background
}
