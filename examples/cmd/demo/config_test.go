package main

import (
	"reflect"
	"testing"

	"github.com/spoolgate/spoolgate/spool/config"
)

// TestModernKeys keeps the demo's Markdown-page keys those of site
// standin-md in examples/site-standin.yaml, and examples/demo.yaml a valid
// config with them and without them.
func TestModernKeys(t *testing.T) {
	kit, err := config.ParseConfig([]byte("sites:\n  s:\n    url: http://127.0.0.1:1/\n    input: x\n    send: x\n    answer: x\n" + modernKeys))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := config.LoadConfig("../../site-standin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, want := kit.Sites["s"], ex.Sites["standin-md"]
	pick := func(s config.SiteConfig) []any {
		return []any{s.Done, s.Copy, s.ErrorTurn, s.Chrome, s.Network, s.Conversation, s.UserMessage, s.History, s.NotFound}
	}
	if !reflect.DeepEqual(pick(got), pick(want)) {
		t.Errorf("demo's keys %v\nstandin-md's %v", pick(got), pick(want))
	}
	for _, modern := range []bool{true, false} {
		path, cfg, err := writeConfig("../../demo.yaml", t.TempDir(), "http://127.0.0.1:1/v1", "http://127.0.0.1:2/", 2, modern)
		if err != nil {
			t.Fatalf("modern %v: %v", modern, err)
		}
		if s := cfg.Sites["standin"]; (s.Done != "") != modern || (s.Network != nil) != modern {
			t.Errorf("modern %v: %s has site %+v", modern, path, s)
		}
	}
}
