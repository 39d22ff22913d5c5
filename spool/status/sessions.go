package status

import (
	"slices"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Session is one web session's view: one account on one site in one
// browser profile, running one task at a time.
type Session struct {
	Account string `json:"account"`
	Site    string `json:"site"`
	// State is running, idle, disabled, held, logged out, leased by
	// another host, or standby (see status.Session*).
	State string `json:"state"`
	// Task is the task it runs (state running), with its heartbeat's age.
	Task                string  `json:"task,omitempty"`
	HeartbeatAgeSeconds float64 `json:"heartbeatAgeSeconds,omitempty"`
	// Lease is the owner (host:pid) of the account's live lease in
	// <spool>/accounts/, empty when no host holds it.
	Lease string `json:"lease,omitempty"`
	// BlockedBy names the foreign lease file (not written by a daemon of
	// this installation) that keeps the account from being taken, for
	// staleAfter at most (state "blocked by a foreign file").
	BlockedBy string `json:"blockedBy,omitempty"`
	// HeldUntil is when a usage limit's hold ends (state held).
	HeldUntil *time.Time `json:"heldUntil,omitempty"`
	// Screenshot is the page that held the account (states signed out
	// and challenge), relative to the spool.
	Screenshot string `json:"screenshot,omitempty"`
	// PacedUntil is when the account's pace lets its next task start
	// (accounts.NAME.pace), set while it is later than now; PacedBy says
	// which rule ("gap", "4 per minute", "working hours").
	PacedUntil *time.Time `json:"pacedUntil,omitempty"`
	PacedBy    string     `json:"pacedBy,omitempty"`
	// Finished and Failed count the tasks whose last attempt ran on the
	// account, in done/ and failed/.
	Finished int `json:"finished"`
	Failed   int `json:"failed"`
}

// sessions builds the web lane's session views from the spool (tasks by
// the account they ran on, leases, switches) and, in a daemon, its live
// view. It also returns how many sessions can run now.
func (s *Snapshotter) sessions(ts []*task, now time.Time, live *taskfile.LaneInfo, disabled map[string]bool) ([]Session, int) {
	specs := s.cfg.WebSessions()
	if len(specs) == 1 && specs[0].Legacy {
		return nil, 1 // one session, as before sessions: nothing new to show
	}
	out := make([]Session, 0, len(specs))
	runnable := 0
	stale := s.cfg.Timing().StaleAfter
	for _, sp := range specs {
		v := Session{Account: sp.Account, Site: sp.Site, State: taskfile.SessionIdle}
		var running *summary
		for i := range ts {
			t := ts[i]
			if t.sum.account != sp.Account {
				continue
			}
			switch t.dir {
			case taskfile.DirDone:
				v.Finished++
			case taskfile.DirFailed:
				v.Failed++
			case taskfile.DirRunning:
				running = &t.sum
			}
		}
		if li, ok := s.store.AccountLeaseAt(sp.Account, now); ok {
			if li.Foreign != "" {
				v.BlockedBy = li.Foreign
			} else {
				v.Lease = li.Owner
			}
		}
		until, held := accountHeldUntil(s.store, sp.Account, now)
		switch {
		case running != nil:
			v.State, v.Task = taskfile.SessionRunning, running.id
			age, _ := taskfile.Stale(taskfile.Summary{HeartbeatAt: running.heartbeatAt, StartedAt: running.startedAt}, now, stale)
			v.HeartbeatAgeSeconds = secs(age)
		case s.disabledAccount(sp.Account, disabled):
			v.State = taskfile.SessionDisabled
		case held:
			v.State, v.Screenshot = heldState(s.store, sp.Account)
			if !until.IsZero() {
				v.HeldUntil = ptr(until)
			}
		case v.BlockedBy != "":
			v.State = taskfile.SessionBlocked
		case v.Lease != "" && !strings.HasPrefix(v.Lease, s.cfg.Host+":"):
			v.State = taskfile.SessionLeased
		}
		if live != nil && v.State == taskfile.SessionIdle {
			// What only the daemon knows: a lock held by another process
			// here, a session signed out.
			for _, ls := range live.Sessions {
				if ls.Account == sp.Account && (ls.State == taskfile.SessionStandby || ls.State == taskfile.SessionLoggedOut) {
					v.State = ls.State
				}
			}
		}
		if v.State == taskfile.SessionIdle {
			if u, by, ok := s.pacedUntil(sp.Account, now); ok {
				v.PacedUntil, v.PacedBy = ptr(u), by
			}
		}
		if v.State != taskfile.SessionDisabled && v.State != taskfile.SessionHeld && v.State != taskfile.SessionStandby &&
			v.State != taskfile.SessionSignedOut && v.State != taskfile.SessionChallenge && v.State != taskfile.SessionPaused {
			runnable++
		}
		out = append(out, v)
	}
	return out, runnable
}

// heldBy says which accounts keep a pending task of model from running:
// its pinned accounts, or every session of its site, when off holds for
// all of them (disabled, or held by a usage limit).
func (s *Snapshotter) heldBy(model string, off func(account string) bool) (string, bool) {
	m, ok := s.cfg.Model(model)
	if !ok || m.Kind != taskfile.KindWeb {
		return "", false
	}
	accts := m.Pinned()
	if len(accts) == 0 {
		for _, sp := range s.cfg.WebSessions() {
			if sp.Site == m.Site {
				accts = append(accts, sp.Account)
			}
		}
	}
	if len(accts) == 0 || slices.ContainsFunc(accts, func(a string) bool { return !off(a) }) {
		return "", false
	}
	return strings.Join(accts, ", "), true
}

// disabledText says that the accounts (one, or several joined by ", ")
// are disabled.
func disabledText(accts string) string {
	if strings.Contains(accts, ", ") {
		return "accounts " + accts + " are disabled"
	}
	return "account " + accts + " is disabled"
}
