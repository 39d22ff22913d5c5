package status

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// HeldPaced: web tasks wait for their accounts' pace (accounts.NAME.pace).
const HeldPaced = "paced"

// pacedUntil reads the account's pace record: when its next task may
// start and by which rule, while that is after now.
func (s *Snapshotter) pacedUntil(account string, now time.Time) (time.Time, string, bool) {
	r, ok := s.store.PaceRecord(account)
	if !ok || !r.PacedUntil.After(now) {
		return time.Time{}, "", false
	}
	return r.PacedUntil, r.PacedBy, true
}

// pacedHeld is the web lane's held reasons of pacing: per account (or set
// of accounts) that every one of them is paced, the pending tasks that
// wait for it and until when the first may start. Such tasks stay
// pending; nothing is spent.
func (s *Snapshotter) pacedHeld(ln *Lane, ts []*task, now time.Time) []Held {
	type paced struct {
		until time.Time
		by    string
	}
	memo := map[string]*paced{}
	lookup := func(a string) *paced {
		p, seen := memo[a]
		if !seen {
			if u, by, ok := s.pacedUntil(a, now); ok {
				p = &paced{u, by}
			}
			memo[a] = p
		}
		return p
	}
	// The first of the accounts to be free again says when the task may
	// start, and by which rule.
	firstOf := func(accts string) paced {
		first := paced{}
		for _, a := range strings.Split(accts, ", ") {
			if p := lookup(a); p != nil && (first.until.IsZero() || p.until.Before(first.until)) {
				first = *p
			}
		}
		return first
	}
	count := map[string]int{}
	for _, t := range ts {
		if t.dir != taskfile.DirPending {
			continue
		}
		if accts, held := s.heldBy(t.sum.model, func(a string) bool { return lookup(a) != nil }); held {
			count[accts]++
			p := firstOf(accts)
			ln.addWait(t.sum.id, Wait{Kind: HeldPaced, Account: accts, Reason: p.by, Until: ptr(p.until)})
		}
	}
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Held
	for _, k := range keys {
		first := firstOf(k)
		out = append(out, Held{Kind: HeldPaced, Account: k, Count: count[k], Until: ptr(first.until), Reason: first.by,
			Message: fmt.Sprintf("%s: account %s paced until %s (%s)", wait(count[k]), k, first.until.Local().Format("15:04:05"), first.by)})
	}
	return out
}
