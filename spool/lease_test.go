package spool

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// accept drops id into the API lane and takes it in, as a daemon would.
func accept(t *testing.T, s *Store, id string) {
	t.Helper()
	in := s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	if _, err := s.Submit(in, id, []byte("model: fast\ncontent: x\n")); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Intake(in, id+".yaml", taskfile.KindAPI); err != nil || res.Outcome != Accepted {
		t.Fatalf("intake %s: %+v %v", id, res, err)
	}
}

func mustRead(t *testing.T, s *Store, dir, id string) *taskfile.Task {
	t.Helper()
	tk, err := s.Read(taskfile.KindAPI, dir, id)
	if err != nil {
		t.Fatalf("%s in %s/: %v", id, dir, err)
	}
	return tk
}

func TestLease_ClaimMarkBeatFinish(t *testing.T) {
	s := newTestStore(t)
	accept(t, s, "a")
	l, err := s.Claim(taskfile.KindAPI, "a", "h:1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(taskfile.KindAPI, "a", "h:2"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("second claim: %v, want ErrNotExist", err)
	}
	t0 := time.Now().UTC()
	m, err := l.Mark(t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, s, taskfile.DirRunning, "a"); got.State != taskfile.StateRunning || got.Attempt != 1 || got.Owner != "h:1" || got.StartedAt.IsZero() || m.Attempt != 1 {
		t.Fatalf("marked: %+v", got)
	}
	if err := l.Beat(t0.Add(time.Second), 77); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, s, taskfile.DirRunning, "a"); got.BrowserPID != 77 || !got.HeartbeatAt.After(got.StartedAt) {
		t.Fatalf("beat: %+v", got)
	}
	done, err := l.Finish(Outcome{State: taskfile.StateSuccess, Result: "ok"}, t0.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, s, taskfile.DirDone, "a"); got.State != taskfile.StateSuccess || got.Result != "ok" || got.FinishedAt.IsZero() || got.BrowserPID != 77 || done.Result != "ok" {
		t.Fatalf("finished: %+v", got)
	}
	if d := s.Layout.Locate(taskfile.KindAPI, "a"); d != taskfile.DirDone {
		t.Fatalf("in %s/, want done/", d)
	}
}

// A lease whose task was reclaimed elsewhere writes nothing more.
func TestLease_FencedAfterReclaim(t *testing.T) {
	s := newTestStore(t)
	accept(t, s, "f")
	l, _ := s.Claim(taskfile.KindAPI, "f", "h:1")
	if _, err := l.Mark(time.Now()); err != nil {
		t.Fatal(err)
	}
	// Another daemon reclaims it and runs attempt 2.
	if err := s.move(taskfile.KindAPI, taskfile.DirRunning, taskfile.DirPending, "f"); err != nil {
		t.Fatal(err)
	}
	l2, _ := s.Claim(taskfile.KindAPI, "f", "other:2")
	if _, err := l2.Mark(time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := l.Beat(time.Now(), 0); !errors.Is(err, ErrFenced) {
		t.Fatalf("beat: %v, want ErrFenced", err)
	}
	if _, err := l.Finish(Outcome{State: taskfile.StateFailed, Error: "late"}, time.Now()); !errors.Is(err, ErrFenced) {
		t.Fatalf("finish: %v, want ErrFenced", err)
	}
	if got := mustRead(t, s, taskfile.DirRunning, "f"); got.Owner != "other:2" || got.Attempt != 2 {
		t.Fatalf("newer record overwritten: %+v", got)
	}
}

func TestLease_Return(t *testing.T) {
	s := newTestStore(t)
	accept(t, s, "u")
	accept(t, s, "m")
	// Unmarked: back as it was.
	l, _ := s.Claim(taskfile.KindAPI, "u", "h:1")
	if err := l.Return(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, s, taskfile.DirPending, "u"); got.Attempt != 0 || !got.NotBefore.IsZero() || got.State != taskfile.StatePending {
		t.Fatalf("unmarked return: %+v", got)
	}
	// Marked: the attempt is given back, due at notBefore.
	l, _ = s.Claim(taskfile.KindAPI, "m", "h:1")
	if _, err := l.Mark(time.Now()); err != nil {
		t.Fatal(err)
	}
	nb := time.Now().Add(time.Minute).UTC().Truncate(time.Millisecond)
	if err := l.Return(nb); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, s, taskfile.DirPending, "m"); got.Attempt != 0 || !got.NotBefore.Equal(nb) || got.Owner != "" || !got.StartedAt.IsZero() {
		t.Fatalf("marked return: %+v", got)
	}
}

func TestStore_Reclaim(t *testing.T) {
	s := newTestStore(t)
	s.Cfg.Host = "here"
	now := time.Now().UTC()
	stale := s.Cfg.Timing().StaleAfter
	put := func(id string, f func(*taskfile.Task)) {
		tk := &taskfile.Task{TaskID: id, ModelKind: taskfile.KindAPI, Model: "fast", Content: "x", State: taskfile.StateRunning, Attempt: 1,
			SubmittedAt: now, StartedAt: now, HeartbeatAt: now, Owner: "there:1"}
		f(tk)
		if err := putTask(s, taskfile.KindAPI, taskfile.DirRunning, tk); err != nil {
			t.Fatal(err)
		}
	}
	put("fresh", func(tk *taskfile.Task) { tk.HeartbeatAt = now.Add(stale) }) // fresh at both passes
	put("mine", func(tk *taskfile.Task) { tk.Owner = "here:1" })              // held by a runner of ours
	put("dead", func(tk *taskfile.Task) { tk.Owner = "here:999999999" })
	put("stale", func(tk *taskfile.Task) { tk.HeartbeatAt = now.Add(-stale - time.Second) })
	put("last", func(tk *taskfile.Task) { tk.HeartbeatAt, tk.Attempt = now.Add(-stale-time.Second), s.Cfg.MaxAttempts() })
	put("final", func(tk *taskfile.Task) {
		tk.State, tk.Result = taskfile.StateSuccess, "ok"
		tk.HeartbeatAt = now.Add(-stale - time.Second)
	})
	put("unmarked", func(tk *taskfile.Task) {
		tk.State, tk.Owner, tk.Attempt, tk.StartedAt, tk.HeartbeatAt = taskfile.StatePending, "", 0, time.Time{}, time.Time{}
	})
	held := func(id string) bool { return id == "mine" }

	got := map[string]ReclaimAction{}
	rs, err := s.Reclaim(taskfile.KindAPI, now, held)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		got[r.Task.TaskID] = r.Action
	}
	want := map[string]ReclaimAction{"dead": Retried, "stale": Retried, "last": Failed, "final": Completed}
	if len(got) != len(want) {
		t.Errorf("first pass: %v, want %v", got, want)
	}
	for id, a := range want {
		if got[id] != a {
			t.Errorf("%s: action %d, want %d", id, got[id], a)
		}
	}
	if tk := mustRead(t, s, taskfile.DirPending, "stale"); tk.ErrorClass != taskfile.ClassStale || tk.Owner != "" || tk.NotBefore.Before(now) {
		t.Errorf("stale: %+v", tk)
	}
	if tk := mustRead(t, s, taskfile.DirFailed, "last"); tk.State != taskfile.StateFailed || tk.ErrorClass != taskfile.ClassStale {
		t.Errorf("last: %+v", tk)
	}
	// The unmarked claim is timed from its first sighting.
	rs, _ = s.Reclaim(taskfile.KindAPI, now.Add(s.Cfg.Timing().ClaimGrace), held)
	if len(rs) != 1 || rs[0].Task.TaskID != "unmarked" || rs[0].Action != Returned {
		t.Fatalf("second pass: %+v", rs)
	}
	for _, id := range []string{"fresh", "mine"} {
		if d := s.Layout.Locate(taskfile.KindAPI, id); d != taskfile.DirRunning {
			t.Errorf("%s moved to %s/", id, d)
		}
	}
}

// Stale is the one staleness rule: heartbeat, else start, older than
// staleAfter.
func TestStale(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		s     taskfile.Summary
		age   time.Duration
		stale bool
	}{
		{"fresh heartbeat", taskfile.Summary{StartedAt: now.Add(-time.Hour), HeartbeatAt: now.Add(-time.Second)}, time.Second, false},
		{"old heartbeat", taskfile.Summary{StartedAt: now.Add(-time.Hour), HeartbeatAt: now.Add(-91 * time.Second)}, 91 * time.Second, true},
		{"exactly staleAfter", taskfile.Summary{HeartbeatAt: now.Add(-90 * time.Second)}, 90 * time.Second, false},
		{"no heartbeat: start", taskfile.Summary{StartedAt: now.Add(-2 * time.Minute)}, 2 * time.Minute, true},
		{"no sign at all", taskfile.Summary{}, 0, false},
	} {
		age, stale := taskfile.Stale(c.s, now, 90*time.Second)
		if age != c.age || stale != c.stale {
			t.Errorf("%s: Stale = %s %v, want %s %v", c.name, age, stale, c.age, c.stale)
		}
	}
}

func TestStore_CancelPendingAndRetry(t *testing.T) {
	s := newTestStore(t)
	accept(t, s, "c")
	if _, err := s.CancelPending(taskfile.KindAPI, "c", time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, s, taskfile.DirCanceled, "c"); got.State != taskfile.StateCanceled || got.ErrorClass != taskfile.ClassCanceled || got.Attempt != 0 {
		t.Fatalf("canceled: %+v", got)
	}
	if _, err := s.CancelPending(taskfile.KindAPI, "c", time.Now()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("second cancel: %v, want ErrNotExist", err)
	}
	from, err := s.Retry(taskfile.KindAPI, "c")
	if err != nil || from != taskfile.DirCanceled {
		t.Fatalf("retry: %s %v", from, err)
	}
	if d := s.Layout.Locate(taskfile.KindAPI, "c"); d != "" {
		t.Fatalf("still in %s/", d)
	}
	var re *RetryError
	if _, err := s.Retry(taskfile.KindAPI, "c"); !errors.As(err, &re) || re.Error() != "c: no such task" {
		t.Fatalf("retry of a task in incoming/: %v", err)
	}
	accept(t, s, "p")
	if _, err := s.Retry(taskfile.KindAPI, "p"); !errors.As(err, &re) || re.Error() != "p is pending: only failed or canceled tasks can be retried" {
		t.Fatalf("retry of a pending task: %v", err)
	}
	in := s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	if _, err := s.Submit(in, "bad", []byte("nope: 1\n")); err != nil {
		t.Fatal(err)
	}
	if res, _ := s.Intake(in, "bad.yaml", taskfile.KindAPI); res.Outcome != Rejected {
		t.Fatalf("intake of bad: %+v", res)
	}
	if _, err := s.Retry(taskfile.KindAPI, "bad"); !errors.As(err, &re) || !re.Rejected || re.Error() != "bad is a rejected drop (see bad.error): fix it and drop it again" {
		t.Fatalf("retry of a rejected drop: %v", err)
	}
}
