package lanes

import (
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// accountBlocked says why an account's tasks wait now, "" when they may
// run: its switch is off ("disabled", <spool>/accounts/NAME.disabled) or a
// usage limit holds it ("held" until until: <spool>/accounts/NAME.held,
// see taskfile.Hold), or a signed-out page or a challenge does ("signed
// out", "challenge": until released). It is the one check of both, for the lane's round
// and for each web session.
func accountBlocked(st *spool.Store, account string, now time.Time) (why string, until time.Time) {
	if st.AccountDisabled(account) {
		return "disabled", time.Time{}
	}
	if h, ok := st.AccountHold(account); ok && h.Active(now) {
		switch h.Kind {
		case taskfile.HoldSignedOut:
			return "signed out", time.Time{}
		case taskfile.HoldChallenge:
			return "challenge", time.Time{}
		case taskfile.HoldPaused:
			return "paused", time.Time{}
		}
		return "held", h.Until
	}
	return "", time.Time{}
}
