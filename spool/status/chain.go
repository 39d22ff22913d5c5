package status

import (
	"fmt"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/chain"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// chainWaits are a lane's pending chained tasks that wait for a parent,
// each with the parents it waits for ("article waits for outline-3").
type chainWaits struct {
	lines []chainLine
	n     int
}

type chainLine struct {
	id      string
	waiting []string
}

// chainHeld notes t if a parent it waits for has not ended.
func (s *Snapshotter) chainHeld(w chainWaits, t summary) chainWaits {
	waiting := waitingFor(s.store.Layout, t.after)
	if len(waiting) == 0 {
		return w // ready, or about to fail naming its parent
	}
	w.n++
	if len(w.lines) < ListCap {
		w.lines = append(w.lines, chainLine{t.id, waiting})
	}
	return w
}

// WaitsFor is what a chained task whose parents are after waits for
// ("waits for outline-3"), reading where each parent is from the share as
// the lanes do; "" when none is left to wait for.
func WaitsFor(l spool.Layout, after []string) string {
	if w := waitingFor(l, after); len(w) > 0 {
		return chain.Verdict{Waiting: w}.Reason()
	}
	return ""
}

// waitingFor are the parents in after that have not ended; none when
// they all succeeded or one of them failed (the child then fails).
func waitingFor(l spool.Layout, after []string) []string {
	v := chain.Judge(after, func(id string) taskfile.State {
		_, where := l.LocateAny(id)
		return taskfile.FolderState[where]
	})
	if v.Broken != "" {
		return nil
	}
	return v.Waiting
}

// held is one Held line per waiting task, the first ListCap of them, and
// one for the rest.
func (w chainWaits) held() []Held {
	var out []Held
	for _, l := range w.lines {
		out = append(out, Held{Kind: HeldChain, Count: 1, Task: l.id, Parents: l.waiting,
			Message: l.id + " " + chain.Verdict{Waiting: l.waiting}.Reason()})
	}
	if more := w.n - len(w.lines); more > 0 {
		out = append(out, Held{Kind: HeldChain, Count: more, Message: fmt.Sprintf("%s more wait for their parents (after:)", plural(more, "task"))})
	}
	return out
}
