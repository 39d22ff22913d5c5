package lanes_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes/lanestest"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestDaemon_RunsBothLanes(t *testing.T) {
	cfg := testConfig(t, "")
	r := start(t, cfg)
	for i := 0; i < 10; i++ {
		drop(t, cfg, taskfile.KindAPI, fmt.Sprintf("a%d", i), "fast", fmt.Sprintf("api %d [[duration=5ms]]", i))
	}
	for i := 0; i < 3; i++ {
		drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("w%d", i), "chat", fmt.Sprintf("web %d", i))
	}
	drop(t, cfg, "", "routed", "chat", "routed by the model's kind")
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("a%d", i)
		dir, task := waitFinal(t, r, taskfile.KindAPI, id, 10*time.Second)
		if dir != taskfile.DirDone || task.State != taskfile.StateSuccess || task.Attempt != 1 {
			t.Fatalf("%s: %s state=%s attempt=%d err=%s", id, dir, task.State, task.Attempt, task.Error)
		}
		if want := lanestest.Answer(fmt.Sprintf("api %d", i)); task.Result != want {
			t.Errorf("%s: result %q, want %q", id, task.Result, want)
		}
		if task.Owner != "testhost:"+fmt.Sprint(os.Getpid()) || task.StartedAt.IsZero() || task.FinishedAt.IsZero() {
			t.Errorf("%s: owner %q started %v finished %v", id, task.Owner, task.StartedAt, task.FinishedAt)
		}
	}
	for _, id := range []string{"w0", "w1", "w2", "routed"} {
		if dir, task := waitFinal(t, r, taskfile.KindWeb, id, 10*time.Second); dir != taskfile.DirDone {
			t.Fatalf("%s ended in %s: %s", id, dir, task.Error)
		}
	}
	if _, err := os.Stat(r.store.Layout.LogPath(taskfile.KindWeb, "w0")); err != nil {
		t.Errorf("task log: %v", err)
	}
}

// The web lane never runs two tasks at once: across 200 tasks and a
// restart, the exclusive fake (a chat session) never sees an overlap.
func TestLane_WebNeverOverlaps(t *testing.T) {
	cfg := testConfig(t, "")
	r := start(t, cfg)
	const n = 200
	for i := 0; i < n; i++ {
		drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("w%03d", i), "chat", "x")
	}
	r.sig.wait(t, 20*time.Second, "half done", func() bool { return r.sig.finals(taskfile.KindWeb) >= n/2 })
	r.d.Stop()
	r.startDaemon() // a restart: a new daemon, the same fake session
	r.sig.wait(t, 30*time.Second, "all done", func() bool { return r.sig.finals(taskfile.KindWeb) == n })
	if got := countFiles(t, r.store, taskfile.KindWeb, taskfile.DirDone); got != n {
		t.Fatalf("%d of %d in done/", got, n)
	}
	if r.web.Max() != 1 || r.web.Collisions() != 0 {
		t.Fatalf("web lane overlapped: max %d at once, %d collisions", r.web.Max(), r.web.Collisions())
	}
	for id, c := range r.web.CallCounts() {
		if c != 1 {
			t.Errorf("%s ran %d times", id, c)
		}
	}
}

// The API lane reaches exactly its configured concurrency, never more.
func TestLane_APIConcurrency(t *testing.T) {
	for _, conc := range []int{1, 3, 5} {
		t.Run(fmt.Sprint(conc), func(t *testing.T) {
			cfg := testConfig(t, fmt.Sprintf("api: {concurrency: %d}\n", conc))
			r := start(t, cfg)
			for i := 0; i < 3*conc+2; i++ {
				drop(t, cfg, taskfile.KindAPI, fmt.Sprintf("a%d", i), "fast", "[[duration=150ms]]")
			}
			for i := 0; i < 3*conc+2; i++ {
				if dir, task := waitFinal(t, r, taskfile.KindAPI, fmt.Sprintf("a%d", i), 20*time.Second); dir != taskfile.DirDone {
					t.Fatalf("a%d: %s %s", i, dir, task.Error)
				}
			}
			if r.api.Max() != conc || r.api.Collisions() != 0 {
				t.Fatalf("max at once %d (want exactly %d), quota refusals %d", r.api.Max(), conc, r.api.Collisions())
			}
		})
	}
}

func TestLane_RetriesAndClasses(t *testing.T) {
	cfg := testConfig(t, "")
	r := start(t, cfg)
	tests := []struct {
		id, content string
		dir         string
		class       taskfile.ErrorClass
		attempt     int
	}{
		{"once", "[[fail=1]]", taskfile.DirDone, "", 2},
		{"twice", "[[fail=2]]", taskfile.DirDone, "", 3},
		{"always", "[[fail=9]]", taskfile.DirFailed, taskfile.ClassTransient, 3},
		{"bad", "[[status=400]]", taskfile.DirFailed, taskfile.ClassPermanent, 1},
		{"empty", "[[empty]]", taskfile.DirFailed, taskfile.ClassPermanent, 1},
	}
	for _, tt := range tests {
		drop(t, cfg, taskfile.KindAPI, tt.id, "fast", tt.id+" "+tt.content)
	}
	for _, tt := range tests {
		dir, task := waitFinal(t, r, taskfile.KindAPI, tt.id, 10*time.Second)
		if dir != tt.dir || task.ErrorClass != tt.class || task.Attempt != tt.attempt {
			t.Errorf("%s: %s class=%q attempt=%d (want %s %q %d) error=%q", tt.id, dir, task.ErrorClass, task.Attempt, tt.dir, tt.class, tt.attempt, task.Error)
		}
		if countAll(t, r.store, taskfile.KindAPI, tt.id) != 1 {
			t.Errorf("%s: not exactly one file", tt.id)
		}
	}
}

func countAll(t *testing.T, store *spool.Store, k taskfile.Kind, id string) int {
	n := 0
	for _, d := range taskfile.TaskDirs {
		if _, err := os.Lstat(store.Layout.TaskPath(k, d, id)); err == nil {
			n++
		}
	}
	return n
}

// A stalled executor stops beating, is reclaimed after staleAfter and
// retried; after the last retry the task is failed as stale.
func TestLane_StaleReclaim(t *testing.T) {
	cfg := testConfig(t, "")
	r := start(t, cfg)
	drop(t, cfg, taskfile.KindWeb, "stuck", "chat", "[[stall]]")
	dir, task := waitFinal(t, r, taskfile.KindWeb, "stuck", 20*time.Second)
	if dir != taskfile.DirFailed || task.ErrorClass != taskfile.ClassStale || task.Attempt != cfg.MaxAttempts() {
		t.Fatalf("got %s class=%s attempt=%d error=%q", dir, task.ErrorClass, task.Attempt, task.Error)
	}
}

// A running file left by a dead owner on this host is reclaimed at once.
func TestLane_ReclaimDeadOwner(t *testing.T) {
	cfg := testConfig(t, "")
	store := spool.NewStore(cfg, nil)
	if err := store.Layout.Create(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	orphan := &taskfile.Task{TaskID: "orphan", ModelKind: taskfile.KindAPI, Model: "fast", Content: "left behind",
		State: taskfile.StateRunning, Attempt: 1, SubmittedAt: now, StartedAt: now, HeartbeatAt: now,
		Owner: "testhost:999999"}
	data, err := store.EncodeTask(taskfile.KindAPI, orphan) // as its dead daemon wrote it
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(store.Layout.TaskPath(taskfile.KindAPI, taskfile.DirRunning, "orphan"), data, 0o640); err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	dir, task := waitFinal(t, r, taskfile.KindAPI, "orphan", 5*time.Second)
	if dir != taskfile.DirDone || task.Attempt != 2 {
		t.Fatalf("got %s attempt=%d error=%q", dir, task.Attempt, task.Error)
	}
}

func TestDaemon_Cancel(t *testing.T) {
	cfg := testConfig(t, "")
	r := start(t, cfg)
	// Running: a task that would hang; cancel ends it with its stage.
	drop(t, cfg, taskfile.KindWeb, "long", "chat", "[[hang]]")
	r.sig.wait(t, 5*time.Second, "long running", func() bool { return r.sig.started["web/long"] == 1 })
	// Pending: queued behind the running web task.
	drop(t, cfg, taskfile.KindWeb, "queued", "chat", "never runs")
	r.sig.wait(t, 5*time.Second, "queued pending", func() bool { return r.sig.accepted["web/queued"] })
	// Finished: an API task done before the cancel.
	drop(t, cfg, taskfile.KindAPI, "quick", "fast", "quick")
	waitFinal(t, r, taskfile.KindAPI, "quick", 5*time.Second)

	for _, c := range []struct {
		k  taskfile.Kind
		id string
	}{{taskfile.KindWeb, "queued"}, {taskfile.KindWeb, "long"}, {taskfile.KindAPI, "quick"}} {
		if err := r.store.WriteFileAtomic(r.store.Layout.CancelPath(c.k, c.id), nil); err != nil {
			t.Fatal(err)
		}
	}
	if dir, task := waitFinal(t, r, taskfile.KindWeb, "queued", 5*time.Second); dir != taskfile.DirCanceled || task.State != taskfile.StateCanceled || task.Attempt != 0 {
		t.Errorf("queued: %s %s attempt %d", dir, task.State, task.Attempt)
	}
	start := time.Now()
	dir, task := waitFinal(t, r, taskfile.KindWeb, "long", 5*time.Second)
	if dir != taskfile.DirCanceled || task.State != taskfile.StateCanceled || task.ErrorClass != taskfile.ClassCanceled {
		t.Errorf("long: %s %s %s", dir, task.State, task.ErrorClass)
	}
	t.Logf("running task canceled within %s; error %q", time.Since(start), task.Error)
	if dir, task := waitFinal(t, r, taskfile.KindAPI, "quick", time.Second); dir != taskfile.DirDone || task.State != taskfile.StateSuccess {
		t.Errorf("quick: %s %s: a finished task must keep its real result", dir, task.State)
	}
	for _, c := range []struct {
		k  taskfile.Kind
		id string
	}{{taskfile.KindWeb, "queued"}, {taskfile.KindWeb, "long"}, {taskfile.KindAPI, "quick"}} {
		p := r.store.Layout.CancelPath(c.k, c.id)
		r.sig.wait(t, 5*time.Second, "request handled "+p, func() bool { return r.sig.cancels[string(c.k)+"/"+c.id] })
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("request %s not consumed: %v", p, err)
		}
	}
}

// Pause and an account's off switch hold tasks pending, without restart.
func TestLane_PauseAndAccountSwitch(t *testing.T) {
	cfg := testConfig(t, "")
	r := start(t, cfg)
	if err := os.WriteFile(r.store.Layout.Paused(taskfile.KindAPI), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.store.Layout.Accounts()+"/ops1.disabled", nil, 0o640); err != nil {
		t.Fatal(err)
	}
	drop(t, cfg, taskfile.KindAPI, "held", "fast", "x")
	drop(t, cfg, taskfile.KindWeb, "off", "chat", "x")
	// Each lane takes both in and says why it holds them.
	r.sig.wait(t, 5*time.Second, "both accepted and held", func() bool {
		return r.sig.accepted["api/held"] && r.sig.accepted["web/off"] &&
			r.sig.held["api: lane paused: remove "+r.store.Layout.Paused(taskfile.KindAPI)+" to resume"] &&
			r.sig.held["web: account ops1 disabled: its tasks wait"]
	})
	if r.api.Total() != 0 || r.web.Total() != 0 {
		t.Fatalf("held tasks ran: api %d web %d", r.api.Total(), r.web.Total())
	}
	os.Remove(r.store.Layout.Paused(taskfile.KindAPI))
	os.Remove(r.store.Layout.Accounts() + "/ops1.disabled")
	waitFinal(t, r, taskfile.KindAPI, "held", 5*time.Second)
	waitFinal(t, r, taskfile.KindWeb, "off", 5*time.Second)
}

// A usage limit holds the account, not the lane: the task goes back to
// pending with no attempt spent and the hold written to accounts/; the
// other account's tasks run meanwhile; when the hold ends the task runs,
// and its success removes the ended hold.
func TestLane_AccountHold(t *testing.T) {
	cfg := testConfig(t, "")
	cfg.Models = append(cfg.Models, config.ModelConfig{Name: "chat2", Kind: taskfile.KindWeb, Site: "standin", Account: "ops2", Timeout: config.Duration(time.Minute)})
	r := start(t, cfg)
	drop(t, cfg, taskfile.KindWeb, "limited", "chat", "[[limit=1500ms]] x")
	// The lane says it holds the account once the task is back in pending.
	r.sig.wait(t, 5*time.Second, "the lane to hold ops1", func() bool {
		return r.sig.heldWith("web: account ops1 held by a usage limit until")
	})
	h, ok := r.store.AccountHold("ops1")
	if !ok || h.Reason != "fake: usage limit" || h.Task != "limited" || !strings.HasPrefix(h.By, "testhost:") {
		t.Fatalf("hold %+v, %v", h, ok)
	}
	task, err := r.store.Read(taskfile.KindWeb, taskfile.DirPending, "limited")
	if err != nil || task.Attempt != 0 || !strings.Contains(task.Error, "account held by a usage limit") {
		t.Fatalf("pending task %+v, %v: want attempt 0 and the hold in error", task, err)
	}
	for _, id := range []string{"other1", "other2"} {
		drop(t, cfg, taskfile.KindWeb, id, "chat2", "[[duration=10ms]] y "+id)
	}
	for _, id := range []string{"other1", "other2"} {
		if dir, _ := waitFinal(t, r, taskfile.KindWeb, id, 5*time.Second); dir != taskfile.DirDone {
			t.Fatalf("%s ended in %s", id, dir)
		}
	}
	if time.Now().Before(h.Until) && r.web.Calls("limited") != 1 {
		t.Fatalf("the held task ran again during its hold: %d calls", r.web.Calls("limited"))
	}
	dir, task := waitFinal(t, r, taskfile.KindWeb, "limited", 10*time.Second)
	if dir != taskfile.DirDone || task.Attempt != 1 || task.StartedAt.Before(h.Until) {
		t.Fatalf("limited: %s attempt %d started %s; want done at attempt 1, after the hold ended %s", dir, task.Attempt, task.StartedAt, h.Until)
	}
	if _, ok := r.store.AccountHold("ops1"); ok {
		t.Error("the ended hold was not removed after the success")
	}
}

// Shutdown drains for the grace period, then puts what still runs back to
// pending without spending its attempt.
func TestDaemon_ShutdownReturnsToPending(t *testing.T) {
	cfg := testConfig(t, "shutdownGrace: 100ms\n")
	r := start(t, cfg)
	drop(t, cfg, taskfile.KindAPI, "slow", "fast", "[[hang]]")
	r.sig.wait(t, 5*time.Second, "running", func() bool { return r.sig.started["api/slow"] == 1 })
	r.d.Stop()
	task, err := r.store.Read(taskfile.KindAPI, taskfile.DirPending, "slow")
	if err != nil {
		t.Fatal(err)
	}
	if task.State != taskfile.StatePending || task.Attempt != 0 || task.Owner != "" && task.StartedAt.IsZero() == false {
		t.Fatalf("after shutdown: state %s attempt %d owner %q", task.State, task.Attempt, task.Owner)
	}
}

// Two daemons (two hosts) on one spool run 500 API tasks: each once.
func TestDaemon_TwoDaemonsOneSpool(t *testing.T) {
	// Generous liveness periods: a slow fsync under load must not make a
	// live attempt look stale (that would be a legitimate second run).
	cfgA := testConfig(t, "api: {concurrency: 5}\n")
	cfgA.Heartbeat, cfgA.StaleAfter = config.Duration(200*time.Millisecond), config.Duration(5*time.Second)
	cfgB := *cfgA
	cfgB.Host = "otherhost"
	sig := newSignals() // both daemons' signals
	a := start(t, cfgA, sig)
	b := start(t, &cfgB, sig)
	const n = 500
	for i := 0; i < n; i++ {
		drop(t, cfgA, taskfile.KindAPI, fmt.Sprintf("t%03d", i), "fast", "[[duration=2ms]]")
	}
	sig.wait(t, 60*time.Second, "all done", func() bool { return sig.finals(taskfile.KindAPI) == n })
	if got := countFiles(t, a.store, taskfile.KindAPI, taskfile.DirDone); got != n {
		t.Fatalf("%d of %d in done/", got, n)
	}
	total := map[string]int{}
	for _, f := range []*lanestest.Fake{a.api, b.api} {
		for id, c := range f.CallCounts() {
			total[id] += c
		}
	}
	var dup []string
	for id, c := range total {
		if c != 1 {
			dup = append(dup, id)
		}
	}
	sort.Strings(dup)
	if len(total) != n || len(dup) > 0 {
		t.Fatalf("%d tasks ran, not exactly once: %v", len(total), dup)
	}
	t.Logf("host A ran %d, host B ran %d", a.api.Total(), b.api.Total())
	// Of the two daemons in this process, exactly one runs the web lane
	// (whichever took the lock first); the other stands by.
	standby := 0
	for _, r := range []*rig{a, b} {
		for _, li := range r.d.Info() {
			if li.Kind == taskfile.KindWeb && li.Standby {
				standby++
			}
		}
	}
	if standby != 1 {
		t.Errorf("%d web lanes in standby, want exactly 1", standby)
	}
}

var _ = context.Background

// The lane's round judges a held account's tasks inside the index's
// predicate while status reads the lane (Info) and new drops are merged
// in: none of the three may wait for another for good. (CI, stop 46: the
// round held the index and waited for the lane's lock, Info held the
// lane's lock and waited for the index, and the daemon neither claimed
// nor shut down.)
func TestLane_InfoWhileHeld(t *testing.T) {
	cfg := testConfig(t, "")
	r := start(t, cfg)
	drop(t, cfg, taskfile.KindWeb, "limited", "chat", "[[limit=60s]] x")
	r.sig.wait(t, 5*time.Second, "the lane to hold ops1", func() bool {
		return r.sig.heldWith("web: account ops1 held by a usage limit until")
	})
	stop := make(chan struct{})
	infos := make(chan struct{}, 1)
	go func() {
		defer close(infos)
		for {
			select {
			case <-stop:
				return
			default:
			}
			r.d.Info()
		}
	}()
	// Every drop wakes the lane: a round per drop, each judging the held
	// account under the index's lock while Info runs beside it.
	for i := range 300 {
		drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("held-%03d", i), "chat", "waits for ops1")
	}
	testkit.Wait(t, "every drop merged into pending (the lane not stuck)", 30*time.Second, func() bool {
		ents, _ := os.ReadDir(filepath.Join(cfg.Spool, "web", "pending"))
		return len(ents) >= 301
	})
	close(stop)
	select {
	case <-infos:
	case <-time.After(10 * time.Second):
		t.Fatal("Info never returned: the lane's lock and the index's wait for each other")
	}
}
