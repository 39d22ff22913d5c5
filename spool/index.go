package spool

import (
	"sort"
	"sync"
	"time"
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
func EntryOf(cfg *Config, t *Task) Entry {
	e := Entry{ID: t.TaskID, NotBefore: t.NotBefore, SubmittedAt: t.SubmittedAt, Model: t.Model, Batch: t.Batch, Output: OutputKey(t.Output)}
	if m, ok := cfg.Model(t.Model); ok {
		e.Account, e.Site, e.Pinned = m.Account, m.Site, m.Pinned()
	}
	return e
}

// Index orders one lane's pending tasks by (notBefore, submittedAt), so
// claiming the next task never rescans a folder. It is rebuilt from disk at
// start and kept in step by intake, retries and periodic merges. Safe for
// concurrent use.
type Index struct {
	mu    sync.Mutex
	list  []Entry // sorted
	byID  map[string]Entry
	byOut map[string]string // output key → ID, for entries with an output
}

// NewIndex returns an index holding entries.
func NewIndex(entries []Entry) *Index {
	ix := &Index{byID: make(map[string]Entry, len(entries)), byOut: map[string]string{}}
	for _, e := range entries {
		ix.byID[e.ID] = e
	}
	for _, e := range ix.byID {
		if e.Output != "" {
			ix.byOut[e.Output] = e.ID
		}
	}
	ix.list = make([]Entry, 0, len(ix.byID))
	for _, e := range ix.byID {
		ix.list = append(ix.list, e)
	}
	sort.Slice(ix.list, func(i, j int) bool { return ix.list[i].less(ix.list[j]) })
	return ix
}

// Put adds or replaces the entry for e.ID.
func (ix *Index) Put(e Entry) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if old, ok := ix.byID[e.ID]; ok {
		ix.removeLocked(old)
	}
	ix.byID[e.ID] = e
	if e.Output != "" {
		ix.byOut[e.Output] = e.ID
	}
	i := sort.Search(len(ix.list), func(i int) bool { return e.less(ix.list[i]) })
	ix.list = append(ix.list, Entry{})
	copy(ix.list[i+1:], ix.list[i:])
	ix.list[i] = e
}

// Remove drops id; a missing id is fine.
func (ix *Index) Remove(id string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if old, ok := ix.byID[id]; ok {
		ix.removeLocked(old)
		delete(ix.byID, id)
	}
}

func (ix *Index) removeLocked(e Entry) {
	if e.Output != "" && ix.byOut[e.Output] == e.ID {
		delete(ix.byOut, e.Output)
	}
	i := sort.Search(len(ix.list), func(i int) bool { return !ix.list[i].less(e) })
	if i < len(ix.list) && ix.list[i].ID == e.ID {
		ix.list = append(ix.list[:i], ix.list[i+1:]...)
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
	return len(ix.list)
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
	for _, e := range ix.list {
		if eligible != nil && !eligible(e) {
			continue
		}
		if e.NotBefore.After(now) {
			if wake.IsZero() || e.NotBefore.Before(wake) {
				wake = e.NotBefore
			}
			// The list is ordered by notBefore, so nothing later is due;
			// but a later entry may still be the earliest eligible wake.
			break
		}
		if len(out) < n {
			out = append(out, e)
		}
		if len(out) == n {
			break
		}
	}
	return out, wake
}

// Snapshot returns the entries in order.
func (ix *Index) Snapshot() []Entry {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return append([]Entry(nil), ix.list...)
}
