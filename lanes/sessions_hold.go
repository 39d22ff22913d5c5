package lanes

import (
	"time"

	"github.com/spoolgate/spoolgate/spool"
)

// accountHeld reports whether a usage limit holds the account (its
// <spool>/accounts/NAME.held, see taskfile.Hold).
func accountHeld(st *spool.Store, account string, now time.Time) bool {
	return st.AccountHeld(account, now)
}
