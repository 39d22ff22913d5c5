package status

import (
	"fmt"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/chain"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// chainWaits are a lane's pending chained tasks that wait for a parent,
// each with its reason ("article waits for outline-3").
type chainWaits struct {
	lines []string
	n     int
}

// chainHeld notes t if a parent it waits for has not ended.
func (s *Snapshotter) chainHeld(w chainWaits, t summary) chainWaits {
	why := WaitsFor(s.store.Layout, t.after)
	if why == "" {
		return w // ready, or about to fail naming its parent
	}
	w.n++
	if len(w.lines) < ListCap {
		w.lines = append(w.lines, t.id+" "+why)
	}
	return w
}

// WaitsFor is what a chained task whose parents are after waits for
// ("waits for outline-3"), reading where each parent is from the share as
// the lanes do; "" when none is left to wait for.
func WaitsFor(l spool.Layout, after []string) string {
	v := chain.Judge(after, func(id string) taskfile.State {
		_, where := l.LocateAny(id)
		return taskfile.FolderState[where]
	})
	if len(v.Waiting) == 0 {
		return ""
	}
	return v.Reason()
}

// held is one Held line per waiting task, the first ListCap of them, and
// one for the rest.
func (w chainWaits) held() []Held {
	var out []Held
	for _, l := range w.lines {
		out = append(out, Held{Kind: HeldChain, Count: 1, Message: l})
	}
	if more := w.n - len(w.lines); more > 0 {
		out = append(out, Held{Kind: HeldChain, Count: more, Message: fmt.Sprintf("%s more wait for their parents (after:)", plural(more, "task"))})
	}
	return out
}
