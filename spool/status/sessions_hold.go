package status

import (
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// accountHeldUntil reports whether a usage limit holds the account, and
// until when (zero for an unreadable hold file, which holds until resumed).
func accountHeldUntil(st *spool.Store, account string, now time.Time) (time.Time, bool) {
	h, ok := st.AccountHold(account)
	if !ok || !h.Active(now) {
		return time.Time{}, false
	}
	if h.Err != "" || h.SignIn() {
		return time.Time{}, true
	}
	return h.Until, true
}

// heldState is the session state of an account's running hold: held (a
// usage limit), signed out, or challenge; with the hold's screenshot.
func heldState(st *spool.Store, account string) (state, screenshot string) {
	h, _ := st.AccountHold(account)
	switch h.Kind {
	case taskfile.HoldSignedOut:
		return taskfile.SessionSignedOut, h.Screenshot
	case taskfile.HoldChallenge:
		return taskfile.SessionChallenge, h.Screenshot
	case taskfile.HoldPaused:
		return taskfile.SessionPaused, ""
	}
	return taskfile.SessionHeld, ""
}
