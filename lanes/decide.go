package lanes

import (
	"errors"
	"fmt"
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// attemptEnd is everything the lane knows when an attempt's executor has
// returned: the input of decide.
type attemptEnd struct {
	Err       error  // the executor's error
	OutputErr error  // writing the answer to output/ failed (success only)
	Cause     error  // context.Cause of the attempt's context, or nil
	Text      string // the answer (success only)
	Format    string // how a web answer was read (attempt.Result)
	Method    string
	Check     string // how it compares with the page (attempt.Result)
	CheckDiff string
	Fallback  string              // the read methods that did not deliver first (attempt.Result)
	Usage     taskfile.Usage      // the tokens the API reported (attempt.Result)
	Reasoning string              // the thinking, apart from Text (success only)
	Artifacts []taskfile.Artifact // the generated files kept with Text
	Modes     string              // the page modes the send ran in (web)
	Stage     string              // what the attempt was doing when a cancel reached it
	Attempt   int                 // this attempt's number (1 = the first)
	Took      time.Duration

	MaxAttempts  int
	StaleAfter   time.Duration
	RetryBackoff time.Duration // the first retry's delay
	Now          time.Time
	BrowserPID   int
}

// decide turns an attempt's end into the task's next state. It is pure:
// no clock, no disk. write is false when nothing may be written (another
// daemon took the task over).
//
// Success keeps its real result even if a cancel arrived late; an answer
// whose output file cannot be written fails but keeps its result; a cancel is
// recorded with the stage it reached; shutdown and a usage limit (a hold on
// the account) return the task to pending without spending the attempt;
// transient and stale failures go back to
// pending after the back-off while attempts remain; everything else fails.
func decide(e attemptEnd) (o spool.Outcome, write bool) {
	if errors.Is(e.Cause, attempt.ErrFenced) {
		return spool.Outcome{}, false
	}
	o.BrowserPID, o.Modes, o.AttemptUsage = e.BrowserPID, e.Modes, e.Usage
	err := e.Err
	var class taskfile.ErrorClass
	var retryAfter time.Duration
	switch {
	case err == nil && e.OutputErr == nil:
		o.State, o.Result = taskfile.StateSuccess, e.Text
		o.ResultFormat, o.ResultMethod, o.ResultCheck, o.ResultDiff, o.ResultFallback = e.Format, e.Method, e.Check, e.CheckDiff, e.Fallback
		o.Reasoning, o.Artifacts, o.Usage = e.Reasoning, e.Artifacts, e.Usage
		return o, true
	case err == nil:
		// The answer was paid for: it stays in the task's result, and the
		// task fails without a retry (which would pay again).
		o.State, o.Result, o.Class = taskfile.StateFailed, e.Text, taskfile.ClassPermanent
		o.ResultFormat, o.ResultMethod, o.ResultCheck, o.ResultDiff, o.ResultFallback = e.Format, e.Method, e.Check, e.CheckDiff, e.Fallback
		o.Reasoning, o.Artifacts = e.Reasoning, e.Artifacts
		o.Error = taskfile.OneLine(e.OutputErr.Error() + " (the answer is kept in this file's result)")
		return o, true
	case errors.Is(e.Cause, attempt.ErrShutdown):
		o.State, o.Unspent = taskfile.StatePending, true
		o.Error = taskfile.OneLine("interrupted by shutdown: " + err.Error())
		return o, true
	case errors.Is(e.Cause, attempt.ErrCanceled):
		stage := e.Stage
		if stage == "" {
			stage = "running"
		}
		o.State, o.Class, o.Error = taskfile.StateCanceled, taskfile.ClassCanceled, "canceled by request while "+stage
		return o, true
	case errors.Is(e.Cause, attempt.ErrStale):
		class = taskfile.ClassStale
		err = fmt.Errorf("no liveness for %s: %w", e.StaleAfter, attempt.ErrStale)
	case errors.Is(e.Cause, attempt.ErrTimeout):
		class = taskfile.ClassTransient
		err = fmt.Errorf("%w after %s: %s", attempt.ErrTimeout, e.Took.Round(time.Millisecond), err)
	case attempt.HoldOf(err) != nil:
		// A usage limit, a signed-out page or a challenge holds the
		// account, not the task: back to pending unspent; the account's
		// hold gates when it runs again.
		h := attempt.HoldOf(err)
		o.State, o.Unspent, o.HeldUntil = taskfile.StatePending, true, h.Until
		what := "held by a usage limit until " + h.Until.UTC().Format(time.RFC3339)
		if h.SignIn() {
			what = h.What() // signed out, or a challenge: until released
		}
		o.Error = taskfile.OneLine(fmt.Sprintf("account %s: %s", what, err.Error()))
		return o, true
	default:
		class = attempt.Classify(err)
		var te *attempt.TaskError
		if errors.As(err, &te) {
			retryAfter = te.RetryAfter
		}
	}
	o.Error, o.Class = taskfile.OneLine(err.Error()), class
	if (class == taskfile.ClassTransient || class == taskfile.ClassStale || class == taskfile.ClassSchema) && e.Attempt < e.MaxAttempts {
		o.State = taskfile.StatePending
		o.NotBefore = e.Now.Add(backoff(e.RetryBackoff, e.Attempt, retryAfter))
	} else {
		o.State = taskfile.StateFailed
	}
	return o, true
}

// backoff is the delay before retry number attempt: first, doubled per
// retry (capped near an hour); a server's Retry-After wins.
func backoff(first time.Duration, attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	d := first
	for i := 1; i < attempt && d < time.Hour; i++ {
		d *= 2
	}
	return d
}
