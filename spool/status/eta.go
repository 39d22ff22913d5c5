package status

import (
	"container/heap"
	"sort"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// typicalDuration is the median of finishedAt-startedAt over the lane's
// last medianWindow successes, or the lane's default when it has none.
func typicalDuration(k taskfile.Kind, done []summary) (time.Duration, int) {
	var ok []summary
	for _, d := range done {
		if !d.startedAt.IsZero() && !d.finishedAt.Before(d.startedAt) && !d.finishedAt.IsZero() {
			ok = append(ok, d)
		}
	}
	if len(ok) == 0 {
		if k == taskfile.KindWeb {
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

// simulate plays the lane forward as its scheduler would: each running
// task needs what is left of the typical duration (nothing if it has
// already run longer); whenever a slot is free, the pending task that the
// lane would take then starts in it (of the tasks whose notBefore has
// passed, the highest priority as aged at now, then notBefore,
// submittedAt, taskId), and each takes the typical duration. It returns
// each task's finish, counted from now: running ones first in the given
// order, then pending ones in start order (pending is reordered in place
// to that order).
func simulate(now time.Time, concurrency int, typical, agingAfter time.Duration, running, pending []summary) []time.Duration {
	slots := make([]time.Duration, max(concurrency, len(running), 1))
	out := make([]time.Duration, 0, len(running)+len(pending))
	for i, r := range running {
		// A start in the future (a clock far off, or a planted file)
		// counts as now: what is left is never more than typical (was an
		// ETA of 631,886 h for a running file dated 2099).
		left := typical
		if !r.startedAt.IsZero() {
			left = min(max(typical-now.Sub(r.startedAt), 0), typical)
		}
		slots[i] = left
		out = append(out, left)
	}
	// By notBefore: tasks join the ready queue in this order as time passes.
	sort.Slice(pending, func(i, j int) bool { return queueLess(pending[i], pending[j]) })
	ready := &readyQueue{now: now, aging: agingAfter}
	order := make([]summary, 0, len(pending))
	next := 0
	for len(order) < len(pending) {
		i := 0
		for j := range slots {
			if slots[j] < slots[i] {
				i = j
			}
		}
		at := slots[i]
		for next < len(pending) && pending[next].notBefore.Sub(now) <= at {
			heap.Push(ready, pending[next])
			next++
		}
		if ready.Len() == 0 {
			slots[i] = pending[next].notBefore.Sub(now) // idle until the next one is due
			continue
		}
		p := heap.Pop(ready).(summary)
		slots[i] = at + typical
		order = append(order, p)
		out = append(out, slots[i])
	}
	copy(pending, order)
	return out
}

// queueLess is the index's order within one priority.
func queueLess(a, b summary) bool {
	if !a.notBefore.Equal(b.notBefore) {
		return a.notBefore.Before(b.notBefore)
	}
	if !a.submittedAt.Equal(b.submittedAt) {
		return a.submittedAt.Before(b.submittedAt)
	}
	return a.id < b.id
}

// readyQueue is a heap of due tasks: the lane's next first.
type readyQueue struct {
	now   time.Time
	aging time.Duration
	s     []summary
}

func (q *readyQueue) Len() int { return len(q.s) }
func (q *readyQueue) Less(i, j int) bool {
	a, b := q.s[i], q.s[j]
	if la, lb := a.priority.Aged(a.submittedAt, q.now, q.aging), b.priority.Aged(b.submittedAt, q.now, q.aging); la != lb {
		return la > lb
	}
	// A never-tried task comes before a retry of its priority, as in the
	// index; among them, the index's order.
	if a.notBefore.IsZero() != b.notBefore.IsZero() {
		return a.notBefore.IsZero()
	}
	return queueLess(a, b)
}
func (q *readyQueue) Swap(i, j int) { q.s[i], q.s[j] = q.s[j], q.s[i] }
func (q *readyQueue) Push(x any)    { q.s = append(q.s, x.(summary)) }
func (q *readyQueue) Pop() any {
	x := q.s[len(q.s)-1]
	q.s = q.s[:len(q.s)-1]
	return x
}
