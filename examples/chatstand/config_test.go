package chatstand

import (
	"reflect"
	"testing"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestSiteStandinConfig keeps examples/site-standin.yaml a valid config
// whose models are the two web models the demo and the docs name.
func TestSiteStandinConfig(t *testing.T) {
	cfg, err := config.LoadConfig("../site-standin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, empty := range map[string]bool{"chat-web": true, "chat-web-prompt": false} {
		m, ok := cfg.Model(name)
		if !ok || m.Kind != taskfile.KindWeb || m.NeedEmptyPrompt != empty || m.Site != "standin" {
			t.Errorf("model %s: %+v", name, m)
		}
	}
	// The tests' stand-in site (testkit.StandinSite) is this file's.
	kit, err := config.ParseConfig([]byte("sites:\n" + testkit.StandinSite(cfg.Sites["standin"].URL)))
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Sites["standin"]; !reflect.DeepEqual(s, kit.Sites["standin"]) || s.PromptInput != "textarea.system" || s.Error != ".error" || s.Busy != "button.stop" {
		t.Errorf("site standin: %+v\ntestkit.StandinSite: %+v", s, kit.Sites["standin"])
	}
}

// TestSiteStandinMarkdownConfig holds testkit.StandinMarkdownSite and the
// site standin-md of examples/site-standin.yaml in step.
func TestSiteStandinMarkdownConfig(t *testing.T) {
	cfg, err := config.LoadConfig("../site-standin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	site, ok := cfg.Sites["standin-md"]
	if m, mok := cfg.Model("chat-web-md"); !ok || !mok || m.Site != "standin-md" {
		t.Fatalf("site standin-md %+v, model %+v", site, m)
	}
	kit, err := config.ParseConfig([]byte("sites:\n" + testkit.StandinMarkdownSite(site.URL)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(site, kit.Sites["standin-md"]) {
		t.Errorf("site standin-md: %+v\ntestkit.StandinMarkdownSite: %+v", site, kit.Sites["standin-md"])
	}
}

// TestSiteEditorConfig keeps examples/site-editor.yaml valid; the web
// tests of e2e/web drive every editor with its site's selectors.
func TestSiteEditorConfig(t *testing.T) {
	cfg, err := config.LoadConfig("../site-editor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, ok := cfg.Sites["editor"]
	if m, mok := cfg.Model("editor-web"); !ok || !mok || m.Site != "editor" || m.NeedEmptyPrompt || s.PromptInput != "" {
		t.Fatalf("site editor %+v, model %+v", s, m)
	}
	if s.Limited == "" || len(s.LimitedText) != 2 || s.Continue == "" || s.StartTimeout.D() == 0 {
		t.Errorf("site editor does not show the site keys of a real chat site: %+v", s)
	}
}
