package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Priority is a task's `priority`: high, normal or low ("" is normal).
// A lane takes the ready task with the highest priority, then the oldest
// (the order of the index within one priority is unchanged); a task that
// has waited agingAfter rises one level, and one more for each further
// agingAfter, so none waits for ever behind newer high tasks.
type Priority string

const (
	PriorityHigh   Priority = "high"
	PriorityNormal Priority = "normal"
	PriorityLow    Priority = "low"
)

// Priority levels, in the index's order; normal is the zero value, so an
// Entry built without a priority is normal.
const (
	levelLow    = -1
	levelNormal = 0
	levelHigh   = 1
	levels      = 3 // lists per index: level+1
)

// Valid reports whether p is a priority ("" counts: it is normal).
func (p Priority) Valid() bool {
	return p == "" || p == PriorityHigh || p == PriorityNormal || p == PriorityLow
}

// Level is p's place in the order: low -1, normal 0 (also "" and
// anything unknown), high 1.
func (p Priority) Level() int {
	switch p {
	case PriorityHigh:
		return levelHigh
	case PriorityLow:
		return levelLow
	}
	return levelNormal
}

// String is p's name, "normal" for "".
func (p Priority) String() string {
	if p == "" {
		return string(PriorityNormal)
	}
	return string(p)
}

// Aged is p's level (see Level) for a task submitted then, at now: one
// level up per agingAfter waited, at most high.
func (p Priority) Aged(submitted, now time.Time, agingAfter time.Duration) int {
	return aged(p.Level(), submitted, now, agingAfter)
}

// aged is the priority a task of level base has after waiting since
// submitted: one level up per agingAfter waited, at most high.
func aged(base int, submitted, now time.Time, agingAfter time.Duration) int {
	if base >= levelHigh || agingAfter <= 0 || submitted.IsZero() || !now.After(submitted) {
		return base
	}
	return min(levelHigh, base+int(now.Sub(submitted)/agingAfter))
}

// ErrNotPending is returned by SetPriority for a task that is not waiting
// (it has started, finished, or does not exist).
var ErrNotPending = errors.New("not pending")

// SetPriority changes the priority of pending task id in lane k: a
// durable rewrite of pending/ID, only while it stays there. The rewrite
// swaps the new record in only if the file still holds the record it was
// made from (a claim, a retry or a cancel in between is never undone); if
// it changed, the change is made again on the new record. A running daemon
// learns of it through <lane>/priority/ID (see RequestReindex).
func (s *Store) SetPriority(k Kind, id string, p Priority) (*Task, error) {
	if !p.Valid() || p == "" {
		return nil, fmt.Errorf("priority %q: want high, normal or low", p)
	}
	for try := 0; try < 10; try++ {
		t, err := s.Read(k, DirPending, id)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", id, ErrNotPending)
		}
		if err != nil {
			return nil, err
		}
		if t.Priority == p {
			return t, nil
		}
		want := t.Clone()
		want.Priority = p
		err = s.swapIn(k, DirPending, want, func(cur *Task) error {
			if !sameRecord(cur, t) {
				return errChanged
			}
			return nil
		})
		switch {
		case err == nil:
			return want, SyncDir(s.Layout.Lane(k, DirPending))
		case errors.Is(err, errChanged):
			continue // rewritten meanwhile: apply the change to the new record
		case errors.Is(err, ErrFenced):
			return nil, fmt.Errorf("%s: %w (claimed or canceled meanwhile)", id, ErrNotPending)
		}
		return nil, err
	}
	return nil, fmt.Errorf("%s: the pending file keeps changing; try again", id)
}

var errChanged = fmt.Errorf("%w: rewritten meanwhile", ErrFenced)

// sameRecord reports whether a and b are one record of a pending task.
func sameRecord(a, b *Task) bool {
	ea, errA := a.Encode()
	eb, errB := b.Encode()
	return errA == nil && errB == nil && string(ea) == string(eb)
}

// DirPriority holds a lane's reindex requests: <lane>/priority/ID asks a
// running daemon to read pending/ID again into its index.
const DirPriority = "priority"

// PriorityPath is the reindex request for id.
func (l Layout) PriorityPath(k Kind, id string) string {
	return filepath.Join(l.Root, string(k), DirPriority, id)
}

// RequestReindex asks the daemons of the spool to read pending/ID again
// (after SetPriority): an empty file <lane>/priority/ID, which a daemon
// consumes.
func (s *Store) RequestReindex(k Kind, id string) error {
	if err := os.MkdirAll(filepath.Dir(s.Layout.PriorityPath(k, id)), DirPerm); err != nil {
		return err
	}
	return WriteFileAtomic(s.Layout.PriorityPath(k, id), nil)
}
