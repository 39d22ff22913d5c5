package lanes

import (
	"sort"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/chain"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Entry is one pending task as the index knows it.
type Entry struct {
	ID          string
	NotBefore   time.Time
	SubmittedAt time.Time
	Model       string
	Account     string // the web model's account, for the off switch
	Batch       string
	Site        string   // the web model's site
	Pinned      []string // the web model's accounts; none: any session of Site
	Output      string   // OutputKey of the task's output, if any
	// Priority is the task's level (see Priority.Level; 0 is normal);
	// AgingAfter how long it waits before it rises one level (config
	// agingAfter).
	Priority   int
	AgingAfter time.Duration
	// ConvAccount (web) is the account whose conversation holds the
	// task's earlier send: only its session may take the task before
	// ConvUntil (web.reattachWait after the send's last sign of life),
	// so the next attempt can reattach instead of sending again.
	ConvAccount string
	ConvUntil   time.Time
	// After (a chain) is the tasks this one waits for, until its content
	// is filled: the lane takes it only once their final files are on the
	// share (chain.go).
	After []string
	// FollowUp (web) is the task whose chat this one continues: only the
	// session of the account that ran it may take it (chain.go).
	FollowUp string
}

func (e Entry) less(o Entry) bool {
	if !e.NotBefore.Equal(o.NotBefore) {
		return e.NotBefore.Before(o.NotBefore)
	}
	if !e.SubmittedAt.Equal(o.SubmittedAt) {
		return e.SubmittedAt.Before(o.SubmittedAt)
	}
	return e.ID < o.ID
}

// EntryOf builds the index entry of a pending task.
func EntryOf(cfg *config.Config, t *taskfile.Task) Entry {
	e := Entry{ID: t.TaskID, NotBefore: t.NotBefore, SubmittedAt: t.SubmittedAt, Model: t.Model, Batch: t.Batch,
		Output: spool.OutputKey(t.Output), Priority: t.Priority.Level(), AgingAfter: cfg.AgingAfter.D()}
	if m, ok := cfg.Model(t.Model); ok {
		e.Account, e.Site, e.Pinned = m.Account, m.Site, m.Pinned()
	}
	if !t.Filled() {
		e.After, e.FollowUp = chain.Parents(t), t.FollowUp
	}
	if sr := t.Send; sr != nil && sr.Account != "" {
		since := sr.SendingAt
		for _, at := range []time.Time{sr.SentAt, t.HeartbeatAt, t.NotBefore} {
			if at.After(since) {
				since = at
			}
		}
		e.ConvAccount, e.ConvUntil = sr.Account, since.Add(cfg.Web.ReattachWait.D())
	}
	return e
}

// Index orders one lane's pending tasks so that claiming the next task
// never rescans a folder: by priority (high, normal, low), a task rising
// one level for each agingAfter it has waited since submitted, and within
// one priority by (notBefore, submittedAt, taskId) as before priorities
// existed. It is rebuilt from disk at start and kept in step by intake,
// retries and periodic merges. Safe for concurrent use.
//
// Each level keeps two lists in that order: fresh entries (no notBefore:
// never retried), whose age falls along the list so that the first one a
// caller accepts is also the most aged, and deferred ones (a retry's
// notBefore), which are few and looked at in full when due.
type Index struct {
	mu    sync.Mutex
	fresh [taskfile.Levels][]Entry
	later [taskfile.Levels][]Entry
	byID  map[string]place
	byOut map[string]string // output key → ID, for entries with an output
}

// place is what the index keeps by ID to find an entry in its list: the
// fields of listOf and less, not the whole entry (start-up's peak memory
// holds one per pending task).
type place struct {
	notBefore, submittedAt time.Time
	priority               int
	output                 string
}

func placeOf(e Entry) place {
	return place{notBefore: e.NotBefore, submittedAt: e.SubmittedAt, priority: e.Priority, output: e.Output}
}

// entry is the part of an Entry that locates it: enough for listOf, less
// and the output claim.
func (p place) entry(id string) Entry {
	return Entry{ID: id, NotBefore: p.notBefore, SubmittedAt: p.submittedAt, Priority: p.priority, Output: p.output}
}

// NewIndex returns an index holding entries. It takes entries over: the
// caller must not use the slice afterwards.
func NewIndex(entries []Entry) *Index {
	ix := &Index{byID: make(map[string]place, len(entries)), byOut: map[string]string{}}
	for _, e := range entries {
		ix.byID[e.ID] = placeOf(e) // of several entries of one id, the last wins
	}
	if len(ix.byID) < len(entries) {
		// Rare (one id in two folders after a crash): keep each id's last
		// entry only. A map of the last positions would cost the common
		// case a second map the size of byID at start-up's peak.
		last := make(map[string]int, len(ix.byID))
		for i, e := range entries {
			last[e.ID] = i
		}
		kept := entries[:0]
		for i, e := range entries {
			if last[e.ID] == i {
				kept = append(kept, e)
			}
		}
		clear(entries[len(kept):])
		entries = kept
	}
	// Size each list before filling it: entries are large, and growing
	// 100,000 of them by append allocated five times the index at start-up
	// (make bench's peak RSS).
	var sizes [2 * taskfile.Levels]int
	for _, e := range entries {
		sizes[ix.slot(e)]++
	}
	// Commonly every entry belongs to one list (no retries, no
	// priorities): that list is entries itself, not a copy.
	whole := -1
	for i, n := range sizes {
		if n == len(entries) && n > 0 {
			whole = i
		}
	}
	for i, n := range sizes {
		if i == whole {
			*ix.list(i) = entries[:0:n]
		} else if n > 0 {
			*ix.list(i) = make([]Entry, 0, n)
		}
	}
	for _, e := range entries {
		if e.Output != "" {
			ix.byOut[e.Output] = e.ID
		}
		l := ix.listOf(e)
		*l = append(*l, e)
	}
	for i := range taskfile.Levels {
		for _, l := range []*[]Entry{&ix.fresh[i], &ix.later[i]} {
			sort.Slice(*l, func(i, j int) bool { return (*l)[i].less((*l)[j]) })
		}
	}
	return ix
}

// slot numbers the lists for NewIndex: fresh lists first, then later ones.
func (ix *Index) slot(e Entry) int {
	i := min(max(e.Priority, taskfile.LevelLow), taskfile.LevelHigh) + 1
	if e.NotBefore.IsZero() {
		return i
	}
	return taskfile.Levels + i
}

// list is the list of slot i.
func (ix *Index) list(i int) *[]Entry {
	if i < taskfile.Levels {
		return &ix.fresh[i]
	}
	return &ix.later[i-taskfile.Levels]
}

// listOf is the list e belongs in.
func (ix *Index) listOf(e Entry) *[]Entry { return ix.list(ix.slot(e)) }

// Put adds or replaces the entry for e.ID.
func (ix *Index) Put(e Entry) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if old, ok := ix.byID[e.ID]; ok {
		ix.removeLocked(old.entry(e.ID))
	}
	ix.byID[e.ID] = placeOf(e)
	ix.insertLocked(e)
}

func (ix *Index) insertLocked(e Entry) {
	if e.Output != "" {
		ix.byOut[e.Output] = e.ID
	}
	l := ix.listOf(e)
	i := sort.Search(len(*l), func(i int) bool { return e.less((*l)[i]) })
	*l = append(*l, Entry{})
	copy((*l)[i+1:], (*l)[i:])
	(*l)[i] = e
}

// Replace puts e in place of the entry of its id, only if the index holds
// one: a claim that took the task out meanwhile stays in force.
func (ix *Index) Replace(e Entry) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	old, ok := ix.byID[e.ID]
	if !ok {
		return false
	}
	ix.removeLocked(old.entry(e.ID))
	ix.byID[e.ID] = placeOf(e)
	ix.insertLocked(e)
	return true
}

// Remove drops id; a missing id is fine.
func (ix *Index) Remove(id string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if old, ok := ix.byID[id]; ok {
		ix.removeLocked(old.entry(id))
		delete(ix.byID, id)
	}
}

func (ix *Index) removeLocked(e Entry) {
	if e.Output != "" && ix.byOut[e.Output] == e.ID {
		delete(ix.byOut, e.Output)
	}
	l := ix.listOf(e)
	i := sort.Search(len(*l), func(i int) bool { return !(*l)[i].less(e) })
	if i < len(*l) && (*l)[i].ID == e.ID {
		*l = append((*l)[:i], (*l)[i+1:]...)
	}
}

// Has reports whether id is indexed.
func (ix *Index) Has(id string) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	_, ok := ix.byID[id]
	return ok
}

// OutputOwner returns the ID of the indexed task whose output is key.
func (ix *Index) OutputOwner(key string) (string, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	id, ok := ix.byOut[key]
	return id, ok
}

// Len is the number of pending entries.
func (ix *Index) Len() int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return len(ix.byID)
}

// Next returns up to n entries, in order, that are due at now and that
// eligible accepts (nil accepts all), without removing them. It also
// returns the earliest future notBefore among eligible entries (zero if
// none), so the caller knows when to look again.
func (ix *Index) Next(now time.Time, n int, eligible func(Entry) bool) ([]Entry, time.Time) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var out []Entry
	var wake time.Time
	taken := map[string]bool{}
	for len(out) < n {
		e, ok := ix.pick(now, eligible, taken, &wake)
		if !ok {
			break
		}
		out = append(out, e)
		taken[e.ID] = true
	}
	return out, wake
}

// pick finds the next entry: the highest priority after aging, then the
// index's order. It notes in wake the earliest future notBefore it saw.
func (ix *Index) pick(now time.Time, eligible func(Entry) bool, taken map[string]bool, wake *time.Time) (Entry, bool) {
	var best Entry
	bestLvl := taskfile.LevelLow - 1
	consider := func(e Entry, lvl int) {
		if lvl > bestLvl || lvl == bestLvl && e.less(best) {
			best, bestLvl = e, lvl
		}
	}
	ok := func(e Entry) bool { return !taken[e.ID] && (eligible == nil || eligible(e)) }
	for lvl := taskfile.LevelHigh; lvl >= taskfile.LevelLow; lvl-- {
		// Fresh: ordered by submittedAt, so the first one accepted is the
		// most aged of its list.
		for _, e := range ix.fresh[lvl+1] {
			if ok(e) {
				consider(e, taskfile.AgedLevel(lvl, e.SubmittedAt, now, e.AgingAfter))
				break
			}
		}
		// Deferred: ordered by notBefore; each due one may have aged.
		for _, e := range ix.later[lvl+1] {
			if !ok(e) {
				continue
			}
			if e.NotBefore.After(now) {
				if wake.IsZero() || e.NotBefore.Before(*wake) {
					*wake = e.NotBefore
				}
				break
			}
			consider(e, taskfile.AgedLevel(lvl, e.SubmittedAt, now, e.AgingAfter))
		}
	}
	return best, bestLvl >= taskfile.LevelLow
}

// Snapshot returns the entries by priority (without aging), then in order.
func (ix *Index) Snapshot() []Entry {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var out []Entry
	for lvl := taskfile.LevelHigh; lvl >= taskfile.LevelLow; lvl-- {
		out = append(out, ix.fresh[lvl+1]...)
		out = append(out, ix.later[lvl+1]...)
	}
	return out
}
