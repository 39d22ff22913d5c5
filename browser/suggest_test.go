//go:build linux

package browser

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/examples/chatuistand"
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
// bot's whole answer.
func TestSuggest_ChatUIs(t *testing.T) {
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
			assertNoProcs(t, ProfileDir(cfg))
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
			if len(got) != 1 || got[0].Text != "hello" {
				t.Fatalf("the bot received %+v, want one hello", got)
			}
			if strings.TrimSpace(rep.Answer) != got[0].Answer {
				t.Errorf("answer read %q\nwant %q", rep.Answer, got[0].Answer)
			}
		})
	}
}
