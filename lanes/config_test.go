package lanes

import (
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/lanes/lanestest"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestConfig_WithDefaults(t *testing.T) {
	cfg, err := config.ParseConfig([]byte("spool: " + t.TempDir() + "\nhost: h1\n"))
	if err != nil {
		t.Fatal(err)
	}
	st := spool.NewStore(cfg, nil)
	ex := &lanestest.Fake{}
	tests := []struct {
		name    string
		c       Config
		wantErr string
	}{
		{"defaults", Config{Kind: taskfile.KindAPI, Executor: ex, Store: st}, ""},
		{"no kind", Config{Executor: ex, Store: st}, "kind"},
		{"bad kind", Config{Kind: "gpu", Executor: ex, Store: st}, "kind"},
		{"no store", Config{Kind: taskfile.KindAPI, Executor: ex}, "no store"},
		{"no executor", Config{Kind: taskfile.KindWeb, Store: st}, "without an executor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.c.withDefaults()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Owner != spool.OwnerOf("h1") || got.Log == nil || got.Index == nil {
				t.Errorf("defaults not filled: owner %q log %v index %v", got.Owner, got.Log, got.Index)
			}
		})
	}
	l, err := NewLane(Config{Kind: taskfile.KindAPI, Executor: ex, Store: st, Owner: "o:1"})
	if err != nil || l.c.Owner != "o:1" || l.concurrency() != cfg.API.Concurrency {
		t.Errorf("NewLane = %+v, %v: want the given owner kept and the config's concurrency", l, err)
	}
}
