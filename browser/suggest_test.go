//go:build linux

package browser

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/spoolgate/spoolgate/examples/chatuistand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/config"
)

func suggestCfg(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.ParseConfig([]byte(fmt.Sprintf("spool: %q\nweb: {profiles: %q, instance: test}\n", filepath.Join(t.TempDir(), "spool"), t.TempDir())))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// On every bundled chat UI from npm, --suggest with a probe finds the
// field, the send button and the answer, and the answer it read is the
// bot's whole answer. `make soak` runs it: in `make test`,
// e2e/calibrate's TestE2E_Suggest_ChatUIs runs the same probe on every UI
// through `site new`, checks the probes the bot got and the network key
// proposed, and runs the proposals' reads (network and DOM) through the
// daemon, so this one would only repeat its Chromium work.
func TestSuggest_ChatUIs(t *testing.T) {
	if !testkit.Reliability() {
		t.Skip("make soak runs it; TestE2E_Suggest_ChatUIs covers it in make test")
	}
	needChromium(t)
	for _, ui := range chatuistand.UIs {
		t.Run(ui, func(t *testing.T) {
			s, err := chatuistand.Start(chatuistand.Options{UI: ui})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			cfg := suggestCfg(t)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			rep, err := Suggest(ctx, cfg, ui, config.SiteConfig{URL: s.URL()}, SuggestOptions{Send: "hello"})
			testkit.NoProcs(t, ProfileDir(cfg))
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range rep.Keys {
				t.Logf("%-8s %-6s %-60s %s", k.Key, k.Confidence, k.Selector, k.Why)
			}
			for _, p := range rep.Problems {
				t.Errorf("problem: %s", p)
			}
			for _, key := range []string{"input", "send", "answer"} {
				if k, _ := rep.Get(key); k.Selector == "" {
					t.Errorf("%s not found: %s", key, k.Why)
				}
			}
			got := s.Received()
			// The probe, and a second one when a proposal was high.
			if len(got) == 0 || got[0].Text != "hello" || len(got) > 2 || len(got) == 2 && got[1].Text != SecondProbe("hello") {
				t.Fatalf("the bot received %+v, want one hello (and its second probe)", got)
			}
			want := got[0].Answer
			if ns, _ := rep.Get("network"); ns.Network == nil || rep.NetAnswer != want {
				t.Errorf("network: %s (%s): read %q\nwant %q", ns.Selector, ns.Why, rep.NetAnswer, want)
			}
			switch dom := strings.TrimSpace(rep.Answer); {
			case dom == want:
			case ui == "nlux" && strings.HasPrefix(want, dom) && len(dom) >= len(want)*9/10:
				// nlux's stream renderer draws each character in an
				// animation frame but ends on a timer: on a loaded
				// machine the last frames land in the element it has
				// already removed, and the page keeps the answer short
				// of its end (3 characters at load 4, 6 at load 21).
				// Its response, above, is whole; the probe still read
				// the answer's element, which is what this checks.
				t.Logf("the page lost the end of the answer: %q", want[len(dom):])
			default:
				t.Errorf("answer read %q\nwant %q", rep.Answer, want)
			}
		})
	}
}

// perItem tells an attribute that names one message (its value another
// of the same make on the message beside it) from one that names a kind.
func TestSuggestJS_PerItem(t *testing.T) {
	needChromium(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><body>
<div class="Message right" data-id="k3j2abc9xq1z" data-role="user">hello</div>
<div class="Message left" data-id="ojuyisedytwo" data-role="assistant" id="a">The answer.</div>
<article data-testid="conversation-turn-2">hello</article>
<article data-testid="conversation-turn-3" id="t">The answer.</article>
<button data-testid="copy-button" id="c">Copy</button><button data-testid="like-button">Like</button>
<div data-kind="answer-box" id="k">alone</div>
<div data-message-id="Qx7bLkp">hello</div>
<div data-message-id="AyMotwz" id="m">The answer.</div>
<p data-author="system">Be brief.</p>
<p data-author="assistant" id="s">The answer.</p>
<button data-testid="model-selector">Chat model</button><button data-testid="send-button" id="sb"><svg data-testid="send-button-icon"></svg></button>
</body>`)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab, closeTab, err := openTab(ctx, suggestCfg(t), "", false, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer closeTab()
	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		el, attr string
		want     bool
	}{
		{"#a", "data-id", true},         // a random token beside another
		{"#t", "data-testid", true},     // the same but for its digits
		{"#a", "data-role", false},      // assistant and user: kinds
		{"#c", "data-testid", false},    // copy-button and like-button share their end
		{"#k", "data-kind", false},      // no other element has it
		{"#m", "data-message-id", true}, // assistant-ui's short ids, one that reads as two words
		{"#s", "data-author", false},    // assistant and system: words, not ids
		{"#sb", "data-testid", false},   // send-button beside model-selector: names alike in length, not ids
	}
	for _, tt := range tests {
		got, err := sgEval[bool](tab, fmt.Sprintf(`((el) => perItem(el, %q, el.getAttribute(%q)))(document.querySelector(%q))`, tt.attr, tt.attr, tt.el))
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("perItem(%s, %s) = %v, want %v", tt.el, tt.attr, got, tt.want)
		}
	}
}
