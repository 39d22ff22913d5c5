package spool

import (
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Each attempt leaves one record: claimed, started, ended, its outcome,
// owner and account; a held or handed-back attempt is recorded though it
// is not spent.
func TestLease_AttemptRecords(t *testing.T) {
	s := newTestStore(t)
	accept(t, s, "r")
	t0 := time.Now().UTC().Add(time.Second).Truncate(time.Millisecond)
	run := func(at time.Time, account string, o Outcome) *taskfile.Task {
		t.Helper()
		l, err := s.Claim(taskfile.KindAPI, "r", "h:1")
		if err != nil {
			t.Fatal(err)
		}
		l.OnAccount(account)
		if _, err := l.Mark(at); err != nil {
			t.Fatal(err)
		}
		got, err := l.Finish(o, at.Add(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	run(t0, "a", Outcome{State: taskfile.StatePending, Class: taskfile.ClassTransient, Error: "503"})
	run(t0.Add(time.Minute), "b", Outcome{State: taskfile.StatePending, Unspent: true, HeldUntil: t0.Add(time.Hour), Error: "limit"})
	run(t0.Add(2*time.Minute), "b", Outcome{State: taskfile.StatePending, Unspent: true, Error: "shutdown"})
	last := run(t0.Add(3*time.Minute), "a", Outcome{State: taskfile.StateSuccess, Result: "ok", ResultFormat: "markdown", ResultMethod: "dom"})
	if m := last.Attempts[len(last.Attempts)-1].Method; m != "dom" {
		t.Errorf("the successful attempt's method = %q, want dom", m)
	}
	if last.Attempt != 2 {
		t.Fatalf("attempt = %d, want 2 (held and returned are not spent)", last.Attempt)
	}
	got := mustRead(t, s, taskfile.DirDone, "r").Attempts
	want := []struct {
		n       int
		outcome string
		class   taskfile.ErrorClass
		account string
		held    bool
	}{{1, taskfile.AttemptRetried, taskfile.ClassTransient, "a", false}, {2, taskfile.AttemptHeld, "", "b", true}, {2, taskfile.AttemptReturned, "", "b", false}, {2, taskfile.AttemptSuccess, "", "a", false}}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		start := t0.Add(time.Duration(i) * time.Minute)
		if g.N != w.n || g.Outcome != w.outcome || g.ErrorClass != w.class || g.Account != w.account || g.Owner != "h:1" ||
			!g.StartedAt.Equal(start) || !g.EndedAt.Equal(start.Add(10*time.Second)) || g.ClaimedAt.After(g.StartedAt) || g.ClaimedAt.IsZero() ||
			g.HeldUntil.IsZero() == w.held {
			t.Errorf("record %d = %+v, want %+v from %s", i, g, w, start)
		}
	}
}

// A stale attempt, reclaimed, ends at its last sign of life.
func TestStore_ReclaimClosesAttempt(t *testing.T) {
	s := newTestStore(t)
	accept(t, s, "st")
	l, _ := s.Claim(taskfile.KindAPI, "st", "gone-host:1")
	t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	if _, err := l.Mark(t0); err != nil {
		t.Fatal(err)
	}
	if err := l.Beat(t0.Add(30*time.Second), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reclaim(taskfile.KindAPI, time.Now(), func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	as := mustRead(t, s, taskfile.DirPending, "st").Attempts
	if len(as) != 1 || as[0].Outcome != taskfile.AttemptRetried || as[0].ErrorClass != taskfile.ClassStale || !as[0].EndedAt.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("records %+v, want one retried (stale) ending at the last beat", as)
	}
}
