package lanes

import "time"

// affine narrows a session's predicate to the tasks it may send: a task
// whose earlier send went into a conversation of another account waits
// for that account's session until its ConvUntil (web.reattachWait), so
// that its next attempt reattaches instead of sending a second time. The
// wait's end lowers *wake, so the round comes back for it.
func affine(account string, may func(Entry) bool, now time.Time, wake *time.Time) func(Entry) bool {
	return func(e Entry) bool {
		if e.ConvAccount != "" && e.ConvAccount != account && now.Before(e.ConvUntil) {
			if may(e) && (wake.IsZero() || e.ConvUntil.Before(*wake)) {
				*wake = e.ConvUntil
			}
			return false
		}
		return may(e)
	}
}
