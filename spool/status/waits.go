package status

import (
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A pending task's own wait: the lane's Held lines count tasks by reason,
// an operator looking at one task (its page, its row on the batch page)
// asks why this one does not start (issue 53). Tasks that wait only for
// the tasks ahead of them have no Wait: their place and ETA say it.

// Held kinds.
const (
	HeldPaused   = "paused"   // the lane's paused file exists
	HeldAccount  = "account"  // tasks of a disabled or held account wait
	HeldRunner   = "runner"   // web: the runner lock is held elsewhere and nothing runs
	HeldStandby  = "standby"  // web: this daemon waits for the runner lock
	HeldDeferred = "deferred" // tasks wait for their notBefore (retry back-off)
	HeldChain    = "chain"    // a chained task waits for its parents (after:)
)

// Held is one reason tasks of a lane do not run.
type Held struct {
	// Kind is one of paused, account, paced, runner, standby, deferred.
	Kind string `json:"kind"`
	// Message is the reason in one line, for people.
	Message string `json:"message"`
	// Count is how many pending tasks it holds (0 when it holds the lane).
	Count int `json:"count,omitempty"`
	// Account names the disabled or held account (kind account).
	Account string `json:"account,omitempty"`
	// Until is the earliest notBefore (kind deferred), or when the
	// account's hold ends (kind account, held by a usage limit).
	Until *time.Time `json:"until,omitempty"`
	// Reason is the usage-limit message that holds the account (kind
	// account; empty for a disabled one).
	Reason string `json:"reason,omitempty"`
	// PID and Host name the runner lock's holder (kinds runner, standby).
	PID  int    `json:"pid,omitempty"`
	Host string `json:"host,omitempty"`
	// Hold is the held account's state (kind account): as Wait.Hold.
	Hold string `json:"hold,omitempty"`
	// Site is the held account's site (kind account, signed out or a
	// challenge: where `spoolgate login` signs it in); Holder who holds
	// the runner lock (kind standby).
	Site   string `json:"site,omitempty"`
	Holder string `json:"holder,omitempty"`
	// Task waits for Parents to end (kind chain).
	Task    string   `json:"task,omitempty"`
	Parents []string `json:"parents,omitempty"`
}

// OverdueNote begins an ETA's note when its tasks should have ended by
// the typical duration and have not (one runs longer): its Seconds are
// 0, and the pages say "due now", never "done".
const OverdueNote = "running longer than typical"

// HeldQuota: API tasks of a model wait out the vendor's 429 (its
// Retry-After), as the running daemon's lane knows it.
const HeldQuota = "quota"

// The states of an account that keep a task waiting (Wait.Hold), beside
// a hold file's own kinds (taskfile.HoldSignedOut, HoldChallenge,
// HoldPaused): a usage limit's hold (whose kind in its file is empty),
// and an account disabled.
const (
	HoldLimit    = "limit"
	HoldDisabled = "disabled"
)

// Wait is why a pending task does not start now.
type Wait struct {
	// Kind is HeldPaused (its lane), HeldAccount (every account it may
	// run on is disabled or held), HeldPaced, HeldDeferred (a retry's
	// back-off) or HeldQuota.
	Kind string `json:"kind"`
	// Account names the account, or the accounts joined by ", ".
	Account string `json:"account,omitempty"`
	// Hold is the account's state, for HeldAccount: HoldDisabled,
	// HoldLimit, a hold file's kind (signedOut, challenge, paused), or
	// unreadable (a hold file that holds until resumed; Reason says why).
	Hold string `json:"hold,omitempty"`
	// Reason is the hold's own words (the site's message, the operator's
	// note), or the pace's rule.
	Reason string `json:"reason,omitempty"`
	// Model is the model whose quota is spent (HeldQuota).
	Model string `json:"model,omitempty"`
	// Until is when the wait ends by itself, if it does.
	Until *time.Time `json:"until,omitempty"`
}

// Queue is where one task stands in its lane.
type Queue struct {
	// Place is the task's place among its lane's pending tasks in the
	// order the lane will start them, from 1, and Of how many there are;
	// 0 for a task the lane cannot start (Wait says why) or not pending.
	Place, Of int
	// ETA is its expected end, zero when the lane has no ETA.
	ETA  time.Time
	Wait *Wait
}

// QueueOf is where pending or running task id of lane stands in st.
func (st *Status) QueueOf(lane, id string) Queue {
	for _, ln := range st.Lanes {
		if ln.Lane != lane {
			continue
		}
		q := Queue{Wait: st.waitOf(lane, id)}
		for i, e := range ln.ends {
			if e.id != id {
				continue
			}
			if i < ln.queued {
				q.Wait = nil // it runs
			} else {
				q.Place = i - ln.queued + 1
			}
			if ln.estimated {
				q.ETA = e.at
			}
			break
		}
		q.Of = len(ln.ends) - ln.queued
		return q
	}
	return Queue{}
}

// waitOf is task id's own wait in lane, its lane's pause if none.
func (st *Status) waitOf(lane, id string) *Wait {
	for _, ln := range st.Lanes {
		if ln.Lane != lane {
			continue
		}
		if w, ok := ln.waits[id]; ok {
			return &w
		}
		if ln.Paused {
			return &Wait{Kind: HeldPaused}
		}
	}
	return nil
}

// accountWait is the wait of a task whose accounts (joined by ", ") are
// all off or held: the first one's state names it, and a usage limit's
// end is the earliest of theirs.
func accountWait(accts string, off func(string) bool, holds map[string]taskfile.Hold) Wait {
	w := Wait{Kind: HeldAccount, Account: accts}
	for _, a := range strings.Split(accts, ", ") {
		h, held := holds[a]
		switch {
		case off(a):
			if w.Hold == "" {
				w.Hold = HoldDisabled
			}
		case !held:
		case h.Err != "":
			if w.Hold == "" {
				w.Hold, w.Reason = "unreadable", h.Err
			}
		case h.Kind == taskfile.HoldLimit:
			if w.Hold == "" || w.Hold == HoldLimit {
				w.Hold, w.Reason = HoldLimit, h.Reason
				if w.Until == nil || h.Until.Before(*w.Until) {
					w.Until = ptr(h.Until)
				}
			}
		case w.Hold == "":
			w.Hold, w.Reason = h.Kind, h.Reason
		}
	}
	return w
}

// addWait keeps a task's first wait: an account's hold says more than
// its back-off.
func (ln *Lane) addWait(id string, w Wait) {
	if ln.waits == nil {
		ln.waits = map[string]Wait{}
	}
	if _, ok := ln.waits[id]; !ok {
		ln.waits[id] = w
	}
}
