package lanes_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/lanes/lanestest"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// sessionConfig is testConfig with web accounts acct... on one site and
// the models given (YAML list items).
func sessionConfig(t *testing.T, accts []string, models string) *config.Config {
	t.Helper()
	body := `sites:
  standin: {url: "http://127.0.0.1:9/", input: textarea, send: button, answer: .answer}
models:
` + models + "\naccounts:\n"
	for _, a := range accts {
		body += fmt.Sprintf("  %s: {site: standin}\n", a)
	}
	p := small
	p.settle = "50ms"
	return parseConfig(t, "", "testhost", p, body)
}

func sessionOf(t *testing.T, r *rig, acct string) taskfile.SessionInfo {
	t.Helper()
	for _, s := range r.d.Lane(taskfile.KindWeb).Info().Sessions {
		if s.Account == acct {
			return s
		}
	}
	t.Fatalf("no session %s", acct)
	return taskfile.SessionInfo{}
}

func TestLane_TwoSessions(t *testing.T) {
	cfg := sessionConfig(t, []string{"a1", "a2"}, "  - {name: chat, kind: web, site: standin}")
	r := start(t, cfg)
	const n = 24
	for i := range n {
		drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("w%02d", i), "chat", "[[duration=60ms]] task")
	}
	ran := map[string]int{}
	for i := range n {
		id := fmt.Sprintf("w%02d", i)
		if dir, _ := waitFinal(t, r, taskfile.KindWeb, id, 30*time.Second); dir != taskfile.DirDone {
			t.Fatalf("%s ended in %s", id, dir)
		}
		for _, a := range r.web.RanOn(id) {
			ran[a]++
		}
	}
	per := r.web.MaxPerAccount()
	t.Logf("max at once: per account %v, in total %d; tasks per account %v", per, r.web.Max(), ran)
	if per["a1"] != 1 || per["a2"] != 1 || r.web.Collisions() != 0 {
		t.Fatalf("a session ran two at once: per account %v, collisions %d", per, r.web.Collisions())
	}
	if r.web.Max() != 2 {
		t.Fatalf("at most %d at once in total, want 2 (one per session)", r.web.Max())
	}
	if ran["a1"] == 0 || ran["a2"] == 0 {
		t.Fatalf("both accounts should run tasks: %v", ran)
	}
	for _, s := range r.d.Lane(taskfile.KindWeb).Info().Sessions {
		if s.Finished != ran[s.Account] || s.Failed != 0 {
			t.Errorf("session %s: finished %d failed %d, want %d and 0", s.Account, s.Finished, s.Failed, ran[s.Account])
		}
	}
}

func TestLane_ThreeSessionsAtOnce(t *testing.T) {
	cfg := sessionConfig(t, []string{"a1", "a2", "a3"}, "  - {name: chat, kind: web, site: standin}")
	r := start(t, cfg)
	for i := range 6 {
		drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("w%d", i), "chat", "[[duration=300ms]] task")
	}
	for i := range 6 {
		waitFinal(t, r, taskfile.KindWeb, fmt.Sprintf("w%d", i), 30*time.Second)
	}
	if r.web.Max() != 3 || r.web.Collisions() != 0 {
		t.Fatalf("max %d (want 3), collisions %d", r.web.Max(), r.web.Collisions())
	}
	for a, m := range r.web.MaxPerAccount() {
		if m != 1 {
			t.Fatalf("account %s ran %d at once", a, m)
		}
	}
}

func TestLane_SessionsPinnedAndDisabled(t *testing.T) {
	cfg := sessionConfig(t, []string{"a1", "a2"}, `  - {name: chat, kind: web, site: standin}
  - {name: on1, kind: web, site: standin, account: a1}
  - {name: on2, kind: web, site: standin, accounts: [a2]}`)
	r := start(t, cfg)
	// Pinned tasks run only on their account.
	for i := range 4 {
		drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("p1-%d", i), "on1", "[[duration=20ms]] x")
		drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("p2-%d", i), "on2", "[[duration=20ms]] x")
		drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("u-%d", i), "chat", "[[duration=20ms]] x")
	}
	for i := range 4 {
		for pre, want := range map[string]string{"p1": "a1", "p2": "a2"} {
			id := fmt.Sprintf("%s-%d", pre, i)
			waitFinal(t, r, taskfile.KindWeb, id, 20*time.Second)
			if on := r.web.RanOn(id); slices.ContainsFunc(on, func(a string) bool { return a != want }) {
				t.Fatalf("%s pinned to %s ran on %v", id, want, on)
			}
		}
		waitFinal(t, r, taskfile.KindWeb, fmt.Sprintf("u-%d", i), 20*time.Second)
	}

	// Disabling a1 mid-batch: the unpinned rest goes to a2, a1's pinned
	// tasks stay pending, its session shows why.
	for i := range 8 {
		drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("m-%d", i), "chat", "[[duration=150ms]] x")
	}
	r.sig.wait(t, 10*time.Second, "both sessions running", func() bool {
		return r.sig.started[key(taskfile.KindWeb, "m-0")] > 0 && r.sig.started[key(taskfile.KindWeb, "m-1")] > 0
	})
	if err := os.WriteFile(filepath.Join(cfg.Spool, "accounts", "a1.disabled"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	drop(t, cfg, taskfile.KindWeb, "late1", "on1", "[[duration=20ms]] x")
	drop(t, cfg, taskfile.KindWeb, "late2", "on1", "[[duration=20ms]] x")
	for i := range 8 {
		id := fmt.Sprintf("m-%d", i)
		if dir, _ := waitFinal(t, r, taskfile.KindWeb, id, 20*time.Second); dir != taskfile.DirDone {
			t.Fatalf("%s ended in %s", id, dir)
		}
	}
	r.sig.wait(t, 5*time.Second, "a1's session held", func() bool {
		return r.sig.held["web: account a1 disabled: its tasks wait"]
	})
	if st := sessionOf(t, r, "a1").State; st != taskfile.SessionDisabled {
		t.Fatalf("a1's session is %q, want %q", st, taskfile.SessionDisabled)
	}
	for _, id := range []string{"late1", "late2"} {
		if _, err := r.store.Read(taskfile.KindWeb, taskfile.DirPending, id); err != nil {
			t.Fatalf("%s pinned to disabled a1 should wait in pending: %v", id, err)
		}
		if n := r.web.Calls(id); n != 0 {
			t.Fatalf("%s ran %d times while its account was disabled", id, n)
		}
	}
	// Enabled again, a1 runs them.
	if err := os.Remove(filepath.Join(cfg.Spool, "accounts", "a1.disabled")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"late1", "late2"} {
		waitFinal(t, r, taskfile.KindWeb, id, 20*time.Second)
		if on := r.web.RanOn(id); !slices.Equal(on, []string{"a1"}) {
			t.Fatalf("%s ran on %v, want a1", id, on)
		}
	}
}

// Each session's executor is its own when the daemon builds them.
func TestLane_SessionExecutors(t *testing.T) {
	cfg := sessionConfig(t, []string{"a1", "a2"}, "  - {name: chat, kind: web, site: standin}")
	per := map[string]*lanestest.Fake{}
	r := &rig{t: t, cfg: cfg, web: &lanestest.Fake{Exclusive: true}, api: &lanestest.Fake{}, sig: newSignals()}
	r.store = spool.NewStore(cfg, nil)
	for _, s := range cfg.WebSessions() {
		per[s.Account] = &lanestest.Fake{Exclusive: true}
	}
	r.startDaemonWith(func(s config.WebSession) *lanestest.Fake { return per[s.Account] })
	for i := range 6 {
		drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("w%d", i), "chat", "[[duration=50ms]] x")
	}
	for i := range 6 {
		waitFinal(t, r, taskfile.KindWeb, fmt.Sprintf("w%d", i), 20*time.Second)
	}
	if per["a1"].Total() == 0 || per["a2"].Total() == 0 || r.web.Total() != 0 {
		t.Fatalf("calls: a1 %d, a2 %d, shared %d", per["a1"].Total(), per["a2"].Total(), r.web.Total())
	}
	if per["a1"].Max() != 1 || per["a2"].Max() != 1 {
		t.Fatalf("a session's executor ran two at once")
	}
}

// startDaemonWith is startDaemon with one executor per web session.
func (r *rig) startDaemonWith(per func(config.WebSession) *lanestest.Fake) {
	log := slog.New(slog.NewTextHandler(testWriter{r.t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.d = &lanes.Daemon{Store: r.store, Log: log, Hooks: r.sig.hooks(),
		Executors:       map[taskfile.Kind]attempt.Executor{taskfile.KindWeb: r.web, taskfile.KindAPI: r.api},
		SessionExecutor: func(s config.WebSession) attempt.Executor { return per(s) }}
	if err := r.d.Start(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(r.d.Stop)
}

// A usage limit met on one session holds that session's account: the task
// goes back unspent, the session idles as held, and unpinned tasks run on
// the other session meanwhile.
func TestLane_SessionHeldByLimit(t *testing.T) {
	cfg := sessionConfig(t, []string{"a1", "a2"}, "  - {name: chat, kind: web, site: standin}")
	r := start(t, cfg)
	drop(t, cfg, taskfile.KindWeb, "limited", "chat", "[[limit=1500ms]] x")
	var heldAcct string
	r.sig.wait(t, 5*time.Second, "a session's account held", func() bool {
		for _, a := range []string{"a1", "a2"} {
			if r.sig.heldWith("web: account " + a + " held") {
				heldAcct = a
				return true
			}
		}
		return false
	})
	h, ok := r.store.AccountHold(heldAcct)
	if !ok || h.Task != "limited" {
		t.Fatalf("hold of %s: %+v %v", heldAcct, h, ok)
	}
	other := map[string]string{"a1": "a2", "a2": "a1"}[heldAcct]
	for i := range 3 {
		drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("o%d", i), "chat", "[[duration=10ms]] y")
	}
	for i := range 3 {
		id := fmt.Sprintf("o%d", i)
		waitFinal(t, r, taskfile.KindWeb, id, 5*time.Second)
		if on := r.web.RanOn(id); time.Now().Before(h.Until) && !slices.Equal(on, []string{other}) {
			t.Fatalf("%s ran on %v while %s was held", id, on, heldAcct)
		}
	}
	if time.Now().Before(h.Until) {
		if st := sessionOf(t, r, heldAcct).State; st != taskfile.SessionHeld {
			t.Errorf("held session's state %q, want %q", st, taskfile.SessionHeld)
		}
	}
	dir, task := waitFinal(t, r, taskfile.KindWeb, "limited", 10*time.Second)
	if dir != taskfile.DirDone || task.Attempt != 1 {
		t.Fatalf("limited: %s attempt %d, want done at attempt 1 (the limited attempt spent nothing)", dir, task.Attempt)
	}
}
