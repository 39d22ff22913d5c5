package taskfile

import "time"

// LaneInfo and SessionInfo are a running daemon's live view: lanes fill
// them, status and the pages show them. They live in this leaf so that
// lanes need not import status.

// The states of a web session, as status shows them.
const (
	SessionRunning   = "running"
	SessionIdle      = "idle"
	SessionDisabled  = "disabled"
	SessionHeld      = "held"
	SessionLoggedOut = "logged out"
	// SessionSignedOut and SessionChallenge: a signed-out page or a
	// challenge holds the account (taskfile.Hold) until it is released.
	SessionSignedOut = "signed out"
	SessionChallenge = "challenge"
	// SessionPaused: an operator paused the account (a paused hold).
	SessionPaused  = "paused"
	SessionLeased  = "leased by another host"
	SessionStandby = "standby"
	// SessionBlocked: a foreign lease file (not written by a daemon of
	// this installation) blocks the account, for staleAfter at most.
	SessionBlocked = "blocked by a foreign file"
)

// SessionInfo is a running daemon's live view of one web session.
type SessionInfo struct {
	Account string `json:"account"`
	Site    string `json:"site"`
	Profile string `json:"profile"`
	Lock    string `json:"lock"`
	State   string `json:"state"`
	Task    string `json:"task,omitempty"`
	// Holder is who holds the account's lease (host:pid), or, in standby,
	// the session's lock.
	Holder   string `json:"holder,omitempty"`
	Finished int    `json:"finished"`
	Failed   int    `json:"failed"`
	// PacedUntil is when the account's pace lets its next task start,
	// by the rule PacedBy (an idle session waiting for it).
	PacedUntil time.Time `json:"pacedUntil,omitempty"`
	PacedBy    string    `json:"pacedBy,omitempty"`
}

// LaneInfo is a running daemon's live view of one lane: what only the
// daemon knows, for its own status page.
type LaneInfo struct {
	Kind        Kind     `json:"kind"`
	Concurrency int      `json:"concurrency"`
	Running     []string `json:"running"` // taskIds this daemon runs now
	Pending     int      `json:"pending"` // indexed pending tasks
	Paused      bool     `json:"paused"`
	// Standby is true when the web lane waits for the web-runner lock;
	// Holder names who holds it.
	Standby bool   `json:"standby"`
	Holder  string `json:"holder,omitempty"`
	// Sessions are the web lane's sessions, one per account.
	Sessions []SessionInfo `json:"sessions,omitempty"`
	// Quota is, per API model the vendor answered 429, when it may start
	// again (its Retry-After): its tasks wait until then, in this daemon.
	Quota map[string]time.Time `json:"quota,omitempty"`
}
