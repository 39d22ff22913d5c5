package status

import (
	"sort"
	"time"

	"github.com/spoolgate/spoolgate/spool"
)

// typicalDuration is the median of finishedAt-startedAt over the lane's
// last medianWindow successes, or the lane's default when it has none.
func typicalDuration(k spool.Kind, done []summary) (time.Duration, int) {
	var ok []summary
	for _, d := range done {
		if !d.startedAt.IsZero() && !d.finishedAt.Before(d.startedAt) && !d.finishedAt.IsZero() {
			ok = append(ok, d)
		}
	}
	if len(ok) == 0 {
		if k == spool.KindWeb {
			return DefaultWebDuration, 0
		}
		return DefaultAPIDuration, 0
	}
	sort.Slice(ok, func(i, j int) bool { return ok[i].finishedAt.After(ok[j].finishedAt) })
	if len(ok) > medianWindow {
		ok = ok[:medianWindow]
	}
	ds := make([]time.Duration, len(ok))
	for i, d := range ok {
		ds[i] = d.finishedAt.Sub(d.startedAt)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	n := len(ds)
	if n%2 == 1 {
		return ds[n/2], n
	}
	return (ds[n/2-1] + ds[n/2]) / 2, n
}

// simulate plays the lane forward: each running task needs what is left of
// the typical duration (nothing if it has already run longer), then the
// pending tasks start in queue order (notBefore, submittedAt, taskId), each
// on the first free slot and not before its notBefore, and each takes the
// typical duration. It returns each task's finish, counted from now:
// running ones first in the given order, then pending ones in the given
// order (pending is sorted in place).
func simulate(now time.Time, concurrency int, typical time.Duration, running, pending []summary) []time.Duration {
	slots := make([]time.Duration, max(concurrency, len(running), 1))
	out := make([]time.Duration, 0, len(running)+len(pending))
	for i, r := range running {
		left := typical
		if !r.startedAt.IsZero() {
			left = max(typical-now.Sub(r.startedAt), 0)
		}
		slots[i] = left
		out = append(out, left)
	}
	sort.Slice(pending, func(i, j int) bool {
		a, b := pending[i], pending[j]
		if !a.notBefore.Equal(b.notBefore) {
			return a.notBefore.Before(b.notBefore)
		}
		if !a.submittedAt.Equal(b.submittedAt) {
			return a.submittedAt.Before(b.submittedAt)
		}
		return a.id < b.id
	})
	for _, p := range pending {
		i := 0
		for j := range slots {
			if slots[j] < slots[i] {
				i = j
			}
		}
		start := max(slots[i], p.notBefore.Sub(now))
		slots[i] = start + typical
		out = append(out, slots[i])
	}
	return out
}
