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

// LaneInfo is a lane's live view, for the daemon's own status page.
type LaneInfo struct {
	Kind        spool.Kind `json:"kind"`
	Concurrency int        `json:"concurrency"`
	Running     []string   `json:"running"` // taskIds this daemon runs now
	Pending     int        `json:"pending"` // indexed pending tasks
	Paused      bool       `json:"paused"`
	// Standby is true when the web lane waits for the web-runner lock;
	// Holder names who holds it.
	Standby bool   `json:"standby"`
	Holder  string `json:"holder,omitempty"`
}
