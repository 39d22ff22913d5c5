package lanes

import (
	"time"

	"github.com/spoolgate/spoolgate/spool"
)

// reclaim has the store take over the running/ tasks that no runner of
// this lane holds and nobody else runs any more (see spool.Store.Reclaim),
// and schedules what comes back.
func (l *Lane) reclaim(now time.Time) {
	done, err := l.c.Store.Reclaim(l.c.Kind, now, l.holds)
	if err != nil {
		l.c.Store.Limiter().Fail("reclaim:"+string(l.c.Kind), "reclaim", err, "lane", l.c.Kind)
	} else {
		l.c.Store.Limiter().OK("reclaim:" + string(l.c.Kind))
	}
	for _, r := range done {
		t := r.Task
		log := TaskLogger(l.c.Log, l.c.Store, l.c.Kind, t.TaskID)
		switch r.Action {
		case spool.Completed:
			log.Info("completed a final move left by a crash", "state", t.State)
			l.c.Hooks.final(l.c.Kind, t)
		case spool.Returned:
			log.Info("claim cut short: back to pending", "reason", r.Reason)
			l.Requeue(t)
		default:
			log.Warn("reclaimed", "reason", r.Reason, "attempt", t.Attempt, "now", t.State)
			if r.Action == spool.Retried {
				l.Requeue(t)
			}
			if l.c.Hooks.OnReclaim != nil {
				l.c.Hooks.OnReclaim(l.c.Kind, t)
			}
			l.c.Hooks.final(l.c.Kind, t)
		}
	}
}

// holds reports whether a runner of this lane holds id, or held it until
// lately (its final move done or under way: on a share whose moves are
// link+unlink, and whose listings lag, the task can still show in
// running/ for a moment with the record of before). Reclaim asks twice:
// before it reads the file and again right before it moves it.
func (l *Lane) holds(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.running[id]; ok {
		return true
	}
	return l.finished.within(id, time.Now(), l.timing().StaleAfter)
}

// noteFinished records that this lane's runner of id ends now, and forgets
// what ended longer than staleAfter ago.
func (l *Lane) noteFinished(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finished.note(id, time.Now(), l.timing().StaleAfter)
}

// ended remembers when each of the lane's runners ended, for as long as a
// share may still show its task in running/. Ends come in time order, so
// the oldest are forgotten from the front of a queue: one finish costs the
// same with 10 or 100,000 tasks ended within staleAfter.
type ended struct {
	at    map[string]time.Time
	order []endedAt // in the order of note; an id noted again is in it twice
}

type endedAt struct {
	id string
	at time.Time
}

// note records that id ended at now (not before any earlier note), and
// forgets every end older than keep.
func (e *ended) note(id string, now time.Time, keep time.Duration) {
	if e.at == nil {
		e.at = map[string]time.Time{}
	}
	n := 0
	for _, o := range e.order {
		if now.Sub(o.at) < keep {
			break
		}
		if e.at[o.id].Equal(o.at) { // not noted again since
			delete(e.at, o.id)
		}
		n++
	}
	e.order = append(e.order[n:], endedAt{id, now})
	e.at[id] = now
}

// within reports whether id ended less than keep before now.
func (e *ended) within(id string, now time.Time, keep time.Duration) bool {
	at, ok := e.at[id]
	return ok && now.Sub(at) < keep
}
