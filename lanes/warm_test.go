package lanes_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/lanes/lanestest"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// releasing is a session's executor that keeps something between its
// attempts (attempt.Releaser), counting the lane's calls.
type releasing struct {
	*lanestest.Fake
	sig        *signals
	soft, hard int // Release(false), Release(true); under sig's lock
}

func (x *releasing) Release(wait bool) {
	x.sig.note(func() {
		if wait {
			x.hard++
		} else {
			x.soft++
		}
	})
}

// A session whose work is done lets its account's lease go but keeps
// what its executor kept (a warm browser: web.warm.idle closes it, not an
// empty queue); switched off, it gives that up too; the lane's Stop
// releases it once more, blocking, before it unlocks the session.
func TestLane_ReleasesWhatTheExecutorKept(t *testing.T) {
	cfg := sessionConfig(t, []string{"a1"}, "  - {name: chat, kind: web, site: standin}")
	r := &rig{t: t, cfg: cfg, web: &lanestest.Fake{Exclusive: true}, api: &lanestest.Fake{}, sig: newSignals()}
	r.store = spool.NewStore(cfg, nil)
	x := &releasing{Fake: &lanestest.Fake{Exclusive: true}, sig: r.sig}
	r.d = &lanes.Daemon{Store: r.store, Log: slog.New(slog.NewTextHandler(testWriter{t}, nil)), Hooks: r.sig.hooks(),
		Executors:       map[taskfile.Kind]attempt.Executor{taskfile.KindWeb: r.web, taskfile.KindAPI: r.api},
		SessionExecutor: func(config.WebSession) attempt.Executor { return x }}
	if err := r.d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.d.Stop)
	for i := range 3 {
		drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("w%d", i), "chat", "[[duration=20ms]] x")
	}
	for i := range 3 {
		waitFinal(t, r, taskfile.KindWeb, fmt.Sprintf("w%d", i), 10*time.Second)
	}
	testkit.Wait(t, "the idle session to let a1's lease go", 10*time.Second, func() bool {
		_, held := r.store.AccountLeaseAt("a1", time.Now())
		return !held
	})
	r.sig.mu.Lock()
	soft := x.soft
	r.sig.mu.Unlock()
	if soft != 0 {
		t.Errorf("%d releases once the queue was empty, want none: the warm browser waits for the next task", soft)
	}
	if err := os.WriteFile(filepath.Join(cfg.Spool, "accounts", "a1.disabled"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.sig.wait(t, 10*time.Second, "the switched-off session to release its executor", func() bool { return x.soft > 0 })
	r.d.Stop()
	r.sig.mu.Lock()
	defer r.sig.mu.Unlock()
	if x.Total() != 3 || x.hard != 1 {
		t.Fatalf("%d attempts, %d blocking releases at stop; want 3 and 1", x.Total(), x.hard)
	}
}
