package lanes

import (
	"time"

	"github.com/spoolgate/spoolgate/spool"
)

// Hooks let the daemon's observers (metrics) see what the lanes do. Every
// hook is optional and is called synchronously: keep it cheap.
type Hooks struct {
	// OnAttemptEnd is called after an attempt's outcome is written: t as
	// written (state pending when it will be retried), d the attempt's
	// duration.
	OnAttemptEnd func(k spool.Kind, t *spool.Task, d time.Duration)
	// OnReject is called for each rejected drop.
	OnReject func(lane spool.Kind, reason string)
	// OnReclaim is called when a stale task is reclaimed.
	OnReclaim func(k spool.Kind, t *spool.Task)
}
