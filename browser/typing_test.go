//go:build linux

package browser

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// briefs are the texts every kind of field must hold exactly: paragraphs,
// a blank line, CJK, an emoji, runs of spaces. The 20,000-character brief
// (chatstand.Brief(20000)) goes through `spoolgate run` in e2e/web's tests and is
// timed by BenchmarkTyping.
func briefs() map[string]string {
	return map[string]string{
		"paragraphs": "First paragraph: write a launch post.\n\nSecond paragraph 第二段：中文内容。\nA line with an emoji 🚀 and  two spaces.\n\n\nThird, after two blank lines.",
		"one line":   "A single line: 中文 🎬 and  two spaces",
	}
}

// standSite is the site config of a stand-in page.
func standSite(url string) config.SiteConfig {
	return config.SiteConfig{URL: url, Input: ".input", Send: "button[type=submit]", Answer: ".message.assistant",
		Busy: "button.stop", LoggedOut: "a.login", NewChat: "button.new-chat", Error: ".error",
		Limited: ".limit", Continue: "button.continue", PromptInput: "textarea.system"}
}

// A field whose page rewrites what is typed (here: drops emoji) cannot be
// repaired: the attempt fails as environment before anything is sent, and
// the log holds both texts whole.
func testMangled(t *testing.T, ctx context.Context) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><meta charset="utf-8"><textarea class="input"></textarea><button type="submit">Send</button>
<script>const el = document.querySelector('.input'); el.addEventListener('input', () => { el.value = el.value.replace(/\p{Extended_Pictographic}/gu, ''); });</script>`)
	}))
	defer srv.Close()
	log := &syncBuf{}
	d := newDriver(standSite(srv.URL), "mangler", Timings{}, slogTo(log))
	if _, err := d.open(ctx); err != nil {
		t.Fatal(err)
	}
	text := "keep the rocket 🚀\nplease"
	_, err := d.setText(ctx, "input", ".input", text)
	if attempt.Classify(err) != taskfile.ClassEnvironment || !strings.Contains(err.Error(), "does not hold the text meant") {
		t.Fatalf("err %v, want environment: does not hold the text meant", err)
	}
	for _, want := range []string{`meant="keep the rocket 🚀\npleas`, `fieldHolds="keep the rocket \nplease"`, "method=lines", "method=value"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
}

// TestDriver_SetText types each brief into each kind of field, checks the
// driver's own read-back, sends, and compares what the stand-in's server
// received byte for byte.
func TestDriver_SetText(t *testing.T) {
	ctx := tab(t)
	t.Run("mangled", func(t *testing.T) { testMangled(t, ctx) })
	kinds := append([]string{"shadow/prosemirror", "shadow/lexical"}, chatstand.Inputs...)
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			kind, shadow := strings.CutPrefix(kind, "shadow/")
			sel := ".input"
			if shadow {
				sel = "chat-app >>> .input"
			}
			stand, err := chatstand.Start(chatstand.Options{Scale: 0.001, Input: kind, Shadow: shadow})
			if err != nil {
				t.Fatal(err)
			}
			defer stand.Close()
			lctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			if err := chromedp.Do(lctx, chromedp.Navigate(stand.URL()+"login?user=demo")); err != nil {
				t.Fatal(err)
			}
			for name, text := range briefs() {
				log := &syncBuf{}
				d := newDriver(standSite(stand.URL()), "standin", Timings{}, slogTo(log))
				if _, err := d.open(lctx); err != nil {
					t.Fatalf("%s: open: %v", name, err)
				}
				ty, err := d.setText(lctx, "input", sel, text)
				if kind == "input" && strings.Contains(text, "\n") {
					if err == nil || !strings.Contains(err.Error(), "single-line <input>") {
						t.Fatalf("%s into <input>: err %v, want the single-line refusal", name, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v\nlog:\n%s", name, err, log)
				}
				n := len(stand.Received())
				if _, err := d.click(lctx, "button[type=submit]"); err != nil {
					t.Fatal(err)
				}
				waitUntil(t, "the message to reach the server", 10*time.Second, func() bool { return len(stand.Received()) > n })
				if got := stand.Received()[n].Content; got != text {
					t.Fatalf("%s: the server received %d bytes, not the %d meant (%s)\nlog:\n%s", name, len(got), len(text), firstDiff(got, text), log)
				}
				t.Logf("%-15s %-10s %5d chars: %s in %s", kind, name, ty.Chars, ty.Method, ty.Took.Round(time.Millisecond))
			}
		})
	}
}
