package frontdoor

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// BenchmarkDoor_TurnsFrom is what finding a conversation's last task
// costs a multi-turn request among 1,000 of the token's records in done/
// (each of one 2 kB turn): cold, a door that reads each once; warm, one
// that knows them and only lists and stats them.
func BenchmarkDoor_TurnsFrom(b *testing.B) {
	for _, warm := range []bool{false, true} {
		b.Run(map[bool]string{false: "cold", true: "warm"}[warm], func(b *testing.B) { benchTurnsFrom(b, warm) })
	}
}

func benchTurnsFrom(b *testing.B, warm bool) {
	cfg, err := config.ParseConfig([]byte("models:\n  - {name: w, kind: web, site: s}\nsites:\n  s: {url: \"http://127.0.0.1:9/\", input: textarea, send: button, answer: .a}\n"))
	if err != nil {
		b.Fatal(err)
	}
	cfg.Spool = filepath.Join(b.TempDir(), "spool")
	st := spool.NewStore(cfg, nil)
	if err := st.Layout.Create(); err != nil {
		b.Fatal(err)
	}
	m, _ := cfg.Model("w")
	tk := &token{name: "t"}
	answer := fmt.Sprintf("%02000d", 0)
	for i := range 1000 {
		t := &taskfile.Task{TaskID: fmt.Sprintf("door-t-%04d", i), ModelKind: taskfile.KindWeb, Model: "w", Content: fmt.Sprintf("ask %d", i),
			Result: answer, State: taskfile.StateSuccess, DoorToken: "t", FinishedAt: time.Now()}
		data, err := st.EncodeTask(taskfile.KindWeb, t)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(st.Layout.TaskPath(taskfile.KindWeb, taskfile.DirDone, t.TaskID), data, 0o640); err != nil {
			b.Fatal(err)
		}
	}
	d := &Door{cfg: cfg, st: st}
	turns := []taskfile.Turn{{Content: "ask 999", Result: answer}}
	d.turnsFrom(tk, m, turns)
	b.ResetTimer()
	for b.Loop() {
		if !warm {
			d = &Door{cfg: cfg, st: st}
		}
		if id := d.turnsFrom(tk, m, turns); id != "door-t-0999" {
			b.Fatalf("found %q", id)
		}
	}
}
