package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

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

// commentedConfigDoc writes commentedConfig and reads it back as
// --suggest does.
func commentedConfigDoc(t *testing.T) (string, *yaml.Node, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "spoolgate.yaml")
	if err := os.WriteFile(path, []byte(commentedConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	doc, src, err := readConfigDoc(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, doc, src
}

func TestApplySuggestions(t *testing.T) {
	path, doc, src := commentedConfigDoc(t)
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
	if n := cfg.Sites["examplechat"].Network; n == nil || !n.Equal(config.SiteNetwork{URL: "/api/chat", Format: "sse", Path: "choices.0.delta.content"}) {
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

// TestSuggest_HostileOutput: what a hostile page gives --suggest and
// check (selectors made of its attributes, reasons quoting its text, a
// limit message) carries ESC, BEL, U+0085, a bidi override and a line
// break; none of them reaches the terminal raw, nor the config (the
// comments it writes, the values: a selector that needs one is not
// written).
func TestSuggest_HostileOutput(t *testing.T) {
	const bad = "\x1b[2J\x07\u0085\u202e\nx"
	raw := func(s string) bool { return strings.ContainsAny(s, "\x1b\x07\u0085\u202e") }
	rep := &browser.SuggestReport{Site: "examplechat", URL: "https://chat.example.com/" + bad, Probe: "hi", Answer: "ok" + bad,
		Problems: []string{"a problem " + bad}, Keys: []browser.Suggestion{
			{Key: "input", Selector: `textarea[aria-label="Message"]`, Confidence: "high", Why: "labelled " + bad, Current: "matches nothing"},
			{Key: "send", Selector: `button[aria-label="` + bad + `"]`, Confidence: "high", Why: "named " + bad, Current: "ok",
				Others: []browser.Candidate{{Selector: "b" + bad, Score: 3}}},
			{Key: "answer", Selector: `[data-role="assistant"]`, Confidence: "high", Why: "the new text " + bad},
			{Key: "busy", Selector: `[data-x="` + bad + `"]`, Confidence: "medium", Why: "showed while busy " + bad},
		}}
	var out strings.Builder
	printSuggestions(&out, rep)
	printReading(&out, browser.CheckReading{Methods: []string{"dom" + bad}, Ends: []string{"done" + bad}, Note: bad, Method: "dom", Format: "text",
		EndedBy: "quiet" + bad, Signals: []string{bad}, Fallbacks: []string{bad}}, true)
	if raw(out.String()) {
		t.Errorf("printed raw: %q", out.String())
	}
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if l == "x" || strings.HasPrefix(l, "x") {
			t.Errorf("a page's line break started a line of its own: %q", out.String())
		}
	}

	path, doc, src := commentedConfigDoc(t)
	site := applySuggestions(doc, "examplechat", config.SiteConfig{URL: "https://chat.example.com/"}, rep)
	block, err := siteBlock("examplechat", site)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeConfigDoc(path, src, doc); err != nil {
		t.Fatal(err)
	}
	written, _ := os.ReadFile(path)
	for what, s := range map[string]string{"block": block, "config": string(written)} {
		if raw(s) {
			t.Errorf("%s holds a raw control or bidi character:\n%q", what, s)
		}
		if strings.Contains(s, "data-x") {
			t.Errorf("%s holds a selector that needs a control character:\n%s", what, s)
		}
	}
	if !strings.Contains(block, `# high: labelled \x1b[2J\x07 \u202e x`) {
		t.Errorf("the comment is not the escaped reason:\n%s", block)
	}
}

// --write never trades a config key the probe found working: answer,
// busy and done that pass the probe stay, said so beside them; one that
// failed the probe is replaced.
func TestApplySuggestions_KeepsWhatPasses(t *testing.T) {
	_, doc, _ := commentedConfigDoc(t)
	site := mapGet(mapGet(doc.Content[0], "sites", yaml.MappingNode), "examplechat", yaml.MappingNode)
	for k, v := range map[string]string{"answer": ".answer", "busy": ".stop", "done": ".actions"} {
		n := mapGet(site, k, yaml.ScalarNode)
		n.Value = v
	}
	rep := &browser.SuggestReport{Site: "examplechat", Keys: []browser.Suggestion{
		{Key: "answer", Selector: ".think-block", Confidence: "medium", Current: browser.CurrentPasses},
		{Key: "busy", Selector: ".spinner", Confidence: "medium", Current: browser.CurrentPasses},
		{Key: "done", Selector: `[role="toolbar"]`, Confidence: "medium", Current: "fails the probe: showed while the answer still grew"},
	}}
	block, err := siteBlock("examplechat", applySuggestions(doc, "examplechat", config.SiteConfig{URL: "https://chat.example.com/"}, rep))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`answer: .answer # passes the probe, kept (suggested: .think-block)`, `busy: .stop # passes the probe, kept (suggested: .spinner)`, `done: "[role=\"toolbar\"]" # medium`} {
		if !strings.Contains(block, want) {
			t.Errorf("block lacks %q:\n%s", want, block)
		}
	}
}
