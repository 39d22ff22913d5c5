package status

import (
	"time"

	"github.com/spoolgate/spoolgate/spool"
)

// accountHeldUntil reports whether a usage limit holds the account, and
// until when (zero for an unreadable hold file, which holds until resumed).
func accountHeldUntil(st *spool.Store, account string, now time.Time) (time.Time, bool) {
	h, ok := st.AccountHold(account)
	if !ok || !h.Active(now) {
		return time.Time{}, false
	}
	if h.Err != "" {
		return time.Time{}, true
	}
	return h.Until, true
}
