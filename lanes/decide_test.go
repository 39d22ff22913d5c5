package lanes

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// decide is pure: every case runs without a disk or a clock.
func TestRunner_Decide(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	base := attemptEnd{Attempt: 1, MaxAttempts: 3, StaleAfter: 90 * time.Second, RetryBackoff: 30 * time.Second, Now: now, Took: 2 * time.Second}
	with := func(f func(*attemptEnd)) attemptEnd { e := base; f(&e); return e }
	boom := errors.New("boom\nsecond line")
	tests := []struct {
		name  string
		in    attemptEnd
		write bool
		want  spool.Outcome
	}{
		{"success", with(func(e *attemptEnd) { e.Text = "answer"; e.BrowserPID = 42 }), true,
			spool.Outcome{State: taskfile.StateSuccess, Result: "answer", BrowserPID: 42}},
		{"success keeps the thinking and the modes", with(func(e *attemptEnd) { e.Text = "answer"; e.Reasoning = "why"; e.Modes = "deepThink on" }), true,
			spool.Outcome{State: taskfile.StateSuccess, Result: "answer", Reasoning: "why", Modes: "deepThink on"}},
		{"a mode failure keeps the modes read back, no thinking", with(func(e *attemptEnd) {
			e.Err = attempt.Errorf(taskfile.ClassEnvironment, "mode deepThink: the switch stayed off")
			e.Reasoning, e.Modes = "why", "search off"
		}), true, spool.Outcome{State: taskfile.StateFailed, Class: taskfile.ClassEnvironment, Error: "mode deepThink: the switch stayed off", Modes: "search off"}},
		{"success despite a late cancel", with(func(e *attemptEnd) { e.Text = "a"; e.Cause = attempt.ErrCanceled }), true,
			spool.Outcome{State: taskfile.StateSuccess, Result: "a"}},
		{"fenced writes nothing", with(func(e *attemptEnd) { e.Cause = attempt.ErrFenced; e.Text = "a" }), false, spool.Outcome{}},
		{"output failure fails the task and keeps the answer", with(func(e *attemptEnd) {
			e.Text = "paid"
			e.OutputErr = attempt.Errorf(taskfile.ClassTransient, "output: no")
		}), true,
			spool.Outcome{State: taskfile.StateFailed, Class: taskfile.ClassPermanent, Result: "paid", Error: "output: no (the answer is kept in this file's result)"}},
		{"shutdown gives the attempt back", with(func(e *attemptEnd) { e.Err = boom; e.Cause = attempt.ErrShutdown }), true,
			spool.Outcome{State: taskfile.StatePending, Unspent: true, Error: "interrupted by shutdown: boom second line"}},
		{"cancel records its stage", with(func(e *attemptEnd) { e.Err = boom; e.Cause = attempt.ErrCanceled; e.Stage = "waiting for answer" }), true,
			spool.Outcome{State: taskfile.StateCanceled, Class: taskfile.ClassCanceled, Error: "canceled by request while waiting for answer"}},
		{"cancel before a stage", with(func(e *attemptEnd) { e.Err = boom; e.Cause = attempt.ErrCanceled }), true,
			spool.Outcome{State: taskfile.StateCanceled, Class: taskfile.ClassCanceled, Error: "canceled by request while running"}},
		{"stale retries", with(func(e *attemptEnd) { e.Err = boom; e.Cause = attempt.ErrStale }), true,
			spool.Outcome{State: taskfile.StatePending, Class: taskfile.ClassStale, Error: "no liveness for 1m30s: heartbeat stale", NotBefore: now.Add(30 * time.Second)}},
		{"timeout is transient", with(func(e *attemptEnd) { e.Err = boom; e.Cause = attempt.ErrTimeout; e.Attempt = 2 }), true,
			spool.Outcome{State: taskfile.StatePending, Class: taskfile.ClassTransient, Error: "attempt timed out after 2s: boom second line", NotBefore: now.Add(60 * time.Second)}},
		{"transient on the last attempt fails", with(func(e *attemptEnd) { e.Err = boom; e.Attempt = 3 }), true,
			spool.Outcome{State: taskfile.StateFailed, Class: taskfile.ClassTransient, Error: "boom second line"}},
		{"Retry-After wins", with(func(e *attemptEnd) {
			e.Err = &attempt.TaskError{Class: taskfile.ClassTransient, Err: errors.New("429"), RetryAfter: 5 * time.Second}
		}), true, spool.Outcome{State: taskfile.StatePending, Class: taskfile.ClassTransient, Error: "429", NotBefore: now.Add(5 * time.Second)}},
		{"permanent fails at once", with(func(e *attemptEnd) { e.Err = attempt.Errorf(taskfile.ClassPermanent, "HTTP 400") }), true,
			spool.Outcome{State: taskfile.StateFailed, Class: taskfile.ClassPermanent, Error: "HTTP 400"}},
		{"account fails at once", with(func(e *attemptEnd) { e.Err = attempt.Errorf(taskfile.ClassAccount, "signed out") }), true,
			spool.Outcome{State: taskfile.StateFailed, Class: taskfile.ClassAccount, Error: "signed out"}},
		{"a usage limit holds the account and gives the attempt back", with(func(e *attemptEnd) {
			e.Err = &attempt.TaskError{Class: taskfile.ClassAccount, Err: errors.New("limit: try again in 2 minutes"), Hold: &taskfile.Hold{Until: now.Add(2 * time.Minute)}}
			e.Attempt = 3
		}), true, spool.Outcome{State: taskfile.StatePending, Unspent: true, HeldUntil: now.Add(2 * time.Minute), Error: "account held by a usage limit until 2026-03-01T12:02:00Z: limit: try again in 2 minutes"}},
		{"a cancel wins over a usage limit", with(func(e *attemptEnd) {
			e.Err = &attempt.TaskError{Class: taskfile.ClassAccount, Err: errors.New("limit"), Hold: &taskfile.Hold{Until: now}}
			e.Cause = attempt.ErrCanceled
		}), true, spool.Outcome{State: taskfile.StateCanceled, Class: taskfile.ClassCanceled, Error: "canceled by request while running"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, write := decide(tt.in)
			if write != tt.write || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decide = %+v, %v\nwant      %+v, %v", got, write, tt.want, tt.write)
			}
		})
	}
}

func TestRunner_Backoff(t *testing.T) {
	for _, c := range []struct {
		attempt    int
		retryAfter time.Duration
		want       time.Duration
	}{{1, 0, 10 * time.Second}, {2, 0, 20 * time.Second}, {3, 0, 40 * time.Second}, {3, time.Second, time.Second}, {40, 0, 5120 * time.Second}} {
		if got := backoff(10*time.Second, c.attempt, c.retryAfter); got != c.want {
			t.Errorf("backoff(10s, %d, %s) = %s, want %s", c.attempt, c.retryAfter, got, c.want)
		}
	}
}
