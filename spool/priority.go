package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// ErrNotPending is returned by SetPriority for a task that is not waiting
// (it has started, finished, or does not exist).
var ErrNotPending = errors.New("not pending")

// SetPriority changes the priority of pending task id in lane k: a
// durable rewrite of pending/ID, only while it stays there. The rewrite
// swaps the new record in only if the file still holds the record it was
// made from (a claim, a retry or a cancel in between is never undone); if
// it changed, the change is made again on the new record. A running daemon
// learns of it through <lane>/priority/ID (see RequestReindex).
func (s *Store) SetPriority(k taskfile.Kind, id string, p taskfile.Priority) (*taskfile.Task, error) {
	if !p.Valid() || p == "" {
		return nil, fmt.Errorf("priority %q: want high, normal or low", p)
	}
	for try := 0; try < 10; try++ {
		t, foreign, err := s.readChecked(k, taskfile.DirPending, id)
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
		_, err = s.swapIn(k, taskfile.DirPending, want, nil, func(cur *taskfile.Task) error {
			if foreign != nil {
				cur.DropDaemonFields() // as t was read
			}
			if !sameRecord(cur, t) {
				return errChanged
			}
			return nil
		})
		switch {
		case err == nil:
			return want, fsx.SyncDir(s.Layout.Lane(k, taskfile.DirPending))
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
func sameRecord(a, b *taskfile.Task) bool {
	ea, errA := a.Encode()
	eb, errB := b.Encode()
	return errA == nil && errB == nil && string(ea) == string(eb)
}

// PriorityPath is the reindex request for id.
func (l Layout) PriorityPath(k taskfile.Kind, id string) string {
	return filepath.Join(l.Root, string(k), taskfile.DirPriority, id)
}

// RequestReindex asks the daemons of the spool to read pending/ID again
// (after SetPriority): an empty file <lane>/priority/ID, which a daemon
// consumes.
func (s *Store) RequestReindex(k taskfile.Kind, id string) error {
	if err := os.MkdirAll(filepath.Dir(s.Layout.PriorityPath(k, id)), DirPerm); err != nil {
		return err
	}
	return s.files.WriteAtomic(s.Layout.PriorityPath(k, id), nil)
}
