package status

import (
	"container/heap"
	"slices"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// typicalDuration is the median of finishedAt-startedAt over the lane's
// last medianWindow successes (latest, from a newest of medianWindow fed
// only timed successes), or the lane's default when it has none.
func typicalDuration(k taskfile.Kind, latest *newest) (time.Duration, int) {
	if len(latest.s) == 0 {
		if k == taskfile.KindWeb {
			return DefaultWebDuration, 0
		}
		return DefaultAPIDuration, 0
	}
	ds := make([]time.Duration, len(latest.s))
	for i, d := range latest.s {
		ds[i] = d.finishedAt.Sub(d.startedAt)
	}
	slices.Sort(ds)
	n := len(ds)
	if n%2 == 1 {
		return ds[n/2], n
	}
	return (ds[n/2-1] + ds[n/2]) / 2, n
}

// timed reports whether d has a usable duration.
func timed(d *summary) bool {
	return !d.startedAt.IsZero() && !d.finishedAt.IsZero() && !d.finishedAt.Before(d.startedAt)
}

// newest keeps the n latest-finished of the summaries it is given, in one
// pass and n pointers: a lane's ETA and its falling-back check look at
// its last few answers, and sorting a year of them for that cost a page
// over a year of tasks most of its time (issue 54). It is a min-heap on
// finishedAt until list sorts it, newest first.
type newest struct {
	n int
	s []*summary
}

func (w *newest) add(d *summary) {
	if len(w.s) < w.n {
		w.s = append(w.s, d)
		for i := len(w.s) - 1; i > 0; { // up
			p := (i - 1) / 2
			if !w.s[i].finishedAt.Before(w.s[p].finishedAt) {
				break
			}
			w.s[i], w.s[p] = w.s[p], w.s[i]
			i = p
		}
		return
	}
	if len(w.s) == 0 || !d.finishedAt.After(w.s[0].finishedAt) {
		return
	}
	w.s[0] = d
	for i := 0; ; { // down
		l, m := 2*i+1, i
		if l < len(w.s) && w.s[l].finishedAt.Before(w.s[m].finishedAt) {
			m = l
		}
		if r := l + 1; r < len(w.s) && w.s[r].finishedAt.Before(w.s[m].finishedAt) {
			m = r
		}
		if m == i {
			break
		}
		w.s[i], w.s[m] = w.s[m], w.s[i]
		i = m
	}
}

// list is what w kept, newest first.
func (w *newest) list() []*summary {
	slices.SortFunc(w.s, func(a, b *summary) int { return b.finishedAt.Compare(a.finishedAt) })
	return w.s
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
	// By notBefore: tasks join the ready queue in this order as time
	// passes. The queue and the sort move pointers, not summaries: ten
	// thousand pending tasks are a page's worth of work otherwise.
	byDue := make([]*summary, len(pending))
	for i := range pending {
		byDue[i] = &pending[i]
	}
	slices.SortFunc(byDue, func(a, b *summary) int {
		if queueLess(a, b) {
			return -1
		}
		if queueLess(b, a) {
			return 1
		}
		return 0
	})
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
		for next < len(byDue) && byDue[next].notBefore.Sub(now) <= at {
			heap.Push(ready, queued{byDue[next], byDue[next].priority.Aged(byDue[next].submittedAt, now, agingAfter)})
			next++
		}
		if ready.Len() == 0 {
			slots[i] = byDue[next].notBefore.Sub(now) // idle until the next one is due
			continue
		}
		p := heap.Pop(ready).(queued)
		slots[i] = at + typical
		order = append(order, *p.s)
		out = append(out, slots[i])
	}
	copy(pending, order)
	return out
}

// queueLess is the index's order within one priority.
func queueLess(a, b *summary) bool {
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
	s     []queued
}

// queued is a due task and its priority as aged at the queue's now.
type queued struct {
	s    *summary
	aged int
}

func (q *readyQueue) Len() int { return len(q.s) }
func (q *readyQueue) Less(i, j int) bool {
	a, b := q.s[i], q.s[j]
	if a.aged != b.aged {
		return a.aged > b.aged
	}
	// A never-tried task comes before a retry of its priority, as in the
	// index; among them, the index's order.
	if a.s.notBefore.IsZero() != b.s.notBefore.IsZero() {
		return a.s.notBefore.IsZero()
	}
	return queueLess(a.s, b.s)
}
func (q *readyQueue) Swap(i, j int) { q.s[i], q.s[j] = q.s[j], q.s[i] }
func (q *readyQueue) Push(x any)    { q.s = append(q.s, x.(queued)) }
func (q *readyQueue) Pop() any {
	x := q.s[len(q.s)-1]
	q.s = q.s[:len(q.s)-1]
	return x
}
