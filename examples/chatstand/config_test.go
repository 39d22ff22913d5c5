package chatstand

import (
	"testing"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
)

// TestSiteStandinConfig keeps examples/site-standin.yaml a valid config
// whose models are the two web models the demo and the docs name.
func TestSiteStandinConfig(t *testing.T) {
	cfg, err := spool.LoadConfig("../site-standin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, empty := range map[string]bool{"chat-web": true, "chat-web-prompt": false} {
		m, ok := cfg.Model(name)
		if !ok || m.Kind != spool.KindWeb || m.NeedEmptyPrompt != empty || m.Site != "standin" {
			t.Errorf("model %s: %+v", name, m)
		}
	}
	// The tests' stand-in site (testkit.StandinSite) is this file's.
	kit, err := spool.ParseConfig([]byte("sites:\n" + testkit.StandinSite(cfg.Sites["standin"].URL)))
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.Sites["standin"]; s != kit.Sites["standin"] || s.PromptInput != "textarea.system" || s.Error != ".error" || s.Busy != "button.stop" {
		t.Errorf("site standin: %+v\ntestkit.StandinSite: %+v", s, kit.Sites["standin"])
	}
}
