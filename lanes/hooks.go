package lanes

import (
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Hooks let the daemon's observers (metrics) and tests see what the lanes
// do: tests wait on these events (river's test signals), not on the disk.
// Every hook is optional and is called synchronously: keep it cheap.
type Hooks struct {
	// OnAttemptEnd is called after an attempt's outcome is written: t as
	// written (state pending when it will be retried), d the attempt's
	// duration.
	OnAttemptEnd func(k taskfile.Kind, t *taskfile.Task, d time.Duration)
	// OnReject is called for each rejected drop.
	OnReject func(lane taskfile.Kind, reason string)
	// OnReclaim is called when a stale task is reclaimed.
	OnReclaim func(k taskfile.Kind, t *taskfile.Task)

	// OnAccept is called when intake has made a drop a pending task.
	OnAccept func(k taskfile.Kind, t *taskfile.Task)
	// OnAttemptStart is called when an attempt starts: t is marked
	// running and its executor is about to be called.
	OnAttemptStart func(k taskfile.Kind, t *taskfile.Task)
	// OnFinal is called whenever this daemon has put a task in done/,
	// failed/ or canceled/ (an attempt's end, a reclaim, a cancel of a
	// pending task), with the record as written.
	OnFinal func(k taskfile.Kind, t *taskfile.Task)
	// OnCancelRequest is called when a cancel request for id has been
	// handled and consumed (or left to the daemon that runs the task).
	OnCancelRequest func(k taskfile.Kind, id string)
	// OnHold is called when a lane starts holding its tasks for a new
	// reason (lane paused, account disabled).
	OnHold func(k taskfile.Kind, reason string)
	// OnDelivery is called when a web attempt has recorded how it
	// delivered the prompt (sent, reattached, resent): t as written.
	OnDelivery func(k taskfile.Kind, t *taskfile.Task, d taskfile.Delivery)
}

// final calls OnFinal for t if t is in a final state.
func (h Hooks) final(k taskfile.Kind, t *taskfile.Task) {
	if h.OnFinal != nil && t.State.Final() {
		h.OnFinal(k, t)
	}
}

// And returns hooks that call h's hook, then o's, for every event: the
// daemon's observers (metrics, notifications) each keep their own Hooks.
func (h Hooks) And(o Hooks) Hooks {
	return Hooks{
		OnAttemptEnd:    then3(h.OnAttemptEnd, o.OnAttemptEnd),
		OnReject:        then2(h.OnReject, o.OnReject),
		OnReclaim:       then2(h.OnReclaim, o.OnReclaim),
		OnAccept:        then2(h.OnAccept, o.OnAccept),
		OnAttemptStart:  then2(h.OnAttemptStart, o.OnAttemptStart),
		OnFinal:         then2(h.OnFinal, o.OnFinal),
		OnCancelRequest: then2(h.OnCancelRequest, o.OnCancelRequest),
		OnHold:          then2(h.OnHold, o.OnHold),
		OnDelivery:      then3(h.OnDelivery, o.OnDelivery),
	}
}

func then2[A, B any](f, g func(A, B)) func(A, B) {
	switch {
	case f == nil:
		return g
	case g == nil:
		return f
	}
	return func(a A, b B) { f(a, b); g(a, b) }
}

func then3[A, B, C any](f, g func(A, B, C)) func(A, B, C) {
	switch {
	case f == nil:
		return g
	case g == nil:
		return f
	}
	return func(a A, b B, c C) { f(a, b, c); g(a, b, c) }
}
