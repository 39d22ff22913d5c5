package lanes

import (
	"time"

	"github.com/spoolgate/spoolgate/spool"
)

// accountHeld reports whether a usage limit holds the account.
func accountHeld(st *spool.Store, account string, now time.Time) bool {
	return false
}
