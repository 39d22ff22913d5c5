package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/spool/config"
)

const commentedConfig = `# the team's config: keep this comment
spool: ./spool
http: "off"
sites:
  # our chat vendor
  examplechat:
    url: https://chat.example.com/
    input: "textarea.old"   # renamed by the vendor last week
    send: "button.send"     # still fine
    loggedOut: "a.login"    # not touched by --suggest
`

func suggestReport() *browser.SuggestReport {
	return &browser.SuggestReport{Site: "examplechat", Keys: []browser.Suggestion{
		{Key: "input", Selector: `textarea[aria-label="Message"]`, Confidence: "high", Why: "the only text field", Current: "matches nothing"},
		{Key: "send", Selector: `button[aria-label="Send"]`, Confidence: "high", Why: "named Send", Current: "ok"},
		{Key: "answer", Selector: `[data-role="assistant"]`, Confidence: "high", Why: "the new text"},
		{Key: "network", Selector: `{url: "/api/chat", format: sse, path: choices.0.delta.content}`, Confidence: "high", Why: "/api/chat carried the answer",
			Network: &config.SiteNetwork{URL: "/api/chat", Format: "sse", Path: "choices.0.delta.content"}},
		{Key: "busy", Confidence: "none", Why: "nothing showed"},
		{Key: "done", Selector: `[role="toolbar"]`, Confidence: "medium", Why: "showed after"},
	}}
}

func TestApplySuggestions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "spoolgate.yaml")
	if err := os.WriteFile(path, []byte(commentedConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	doc, src, err := readConfigDoc(path)
	if err != nil {
		t.Fatal(err)
	}
	site := applySuggestions(doc, "examplechat", config.SiteConfig{URL: "https://chat.example.com/"}, suggestReport())
	block, err := siteBlock("examplechat", site)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`input: "textarea[aria-label=\"Message\"]" # high: the only text field`,
		`send: "button.send" # still finds it (suggested: button[aria-label="Send"])`,
		`answer: "[data-role=\"assistant\"]"`,
		`network: {url: "/api/chat", format: sse, path: choices.0.delta.content} # high: /api/chat carried the answer`,
		`loggedOut: "a.login"`,
	} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
	if strings.Contains(block, "busy:") {
		t.Errorf("a key with nothing found is in the block:\n%s", block)
	}
	if strings.Contains(block, "done:") != browser.SiteKeyKnown("done") {
		t.Errorf("done: in the block must follow whether the config knows it (%v):\n%s", browser.SiteKeyKnown("done"), block)
	}
	if err := writeConfigDoc(path, src, doc); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	for _, want := range []string{"# the team's config: keep this comment", "# our chat vendor", "# not touched by --suggest", `textarea[aria-label=\"Message\"]`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("written config lacks %q:\n%s", want, got)
		}
	}
	if bak, _ := os.ReadFile(path + ".bak"); string(bak) != commentedConfig {
		t.Errorf(".bak is not the old config:\n%s", bak)
	}
	cfg, err := config.LoadConfig(path)
	if err != nil {
		t.Fatalf("the written config does not load: %v", err)
	}
	if s := cfg.Sites["examplechat"]; s.Input != `textarea[aria-label="Message"]` || s.Send != "button.send" || s.LoggedOut != "a.login" {
		t.Errorf("loaded site: %+v", s)
	}
	if n := cfg.Sites["examplechat"].Network; n == nil || *n != (config.SiteNetwork{URL: "/api/chat", Format: "sse", Path: "choices.0.delta.content"}) {
		t.Errorf("loaded network: %+v", n)
	}
}

func TestWriteConfigDoc_ReadOnly(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "spoolgate.yaml")
	if err := os.WriteFile(path, []byte(commentedConfig), 0o400); err != nil {
		t.Fatal(err)
	}
	doc, src, err := readConfigDoc(path)
	if err != nil {
		t.Fatal(err)
	}
	applySuggestions(doc, "examplechat", config.SiteConfig{}, suggestReport())
	err = writeConfigDoc(path, src, doc)
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("err = %v, want read-only", err)
	}
	if got, _ := os.ReadFile(path); string(got) != commentedConfig {
		t.Errorf("a read-only config changed")
	}
	if _, err := os.Stat(path + ".bak"); err == nil {
		t.Errorf("a .bak was written though nothing was")
	}
}

// A site made from nothing: no file yet, no sites: key, a null sites:.
func TestApplySuggestions_NewSite(t *testing.T) {
	for name, src := range map[string]string{"no file": "", "no sites": "spool: ./s\n", "null sites": "spool: ./s\nsites:\n"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spoolgate.yaml")
			if src != "" {
				if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			doc, old, err := readConfigDoc(path)
			if err != nil {
				t.Fatal(err)
			}
			applySuggestions(doc, "fresh", config.SiteConfig{URL: "http://127.0.0.1:1/"}, suggestReport())
			if err := writeConfigDoc(path, old, doc); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.LoadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			if s := cfg.Sites["fresh"]; s.URL != "http://127.0.0.1:1/" || s.Send != `button[aria-label="Send"]` {
				t.Errorf("site: %+v", s)
			}
		})
	}
}
