package status

import (
	"time"

	"github.com/spoolgate/spoolgate/spool"
)

// accountHeldUntil reports whether a usage limit holds the account, and
// until when.
func accountHeldUntil(st *spool.Store, account string, now time.Time) (time.Time, bool) {
	return time.Time{}, false
}
