package spool

import "github.com/spoolgate/spoolgate/spool/taskfile"

// outcomeOf names how an attempt that ends in o ended.
func outcomeOf(o Outcome) string {
	switch {
	case o.State == taskfile.StateSuccess:
		return taskfile.AttemptSuccess
	case o.State == taskfile.StateFailed:
		return taskfile.AttemptFailed
	case o.State == taskfile.StateCanceled:
		return taskfile.AttemptCanceled
	case !o.HeldUntil.IsZero():
		return taskfile.AttemptHeld
	case o.Unspent:
		return taskfile.AttemptReturned
	}
	return taskfile.AttemptRetried
}
