package spool

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// ErrFenced is returned by a fenced write when the file on disk is no longer
// the writer's: it is gone, or another owner or attempt has it.
var ErrFenced = errors.New("task file is no longer ours")

// rewrite rewrites task t in lane k, folder dir, only if its file is still
// there. Every rewrite that follows a move uses it: a process frozen
// between its move and its rewrite, whose task another process has since
// moved on, gets ErrFenced instead of recreating the file (which would
// leave one task in two folders). On Linux the swap is atomic
// (RENAME_EXCHANGE); elsewhere, and on file systems without it (FUSE, NFS),
// the check and the rename are two steps. The folder is synced, and with
// it the folders also (at once: see fsx.SyncDirs): the source folder of the
// move that brought the file here.
// It returns the bytes it wrote.
func (s *Store) rewrite(k taskfile.Kind, dir string, t *taskfile.Task, also ...string) ([]byte, error) {
	data, err := s.swapIn(k, dir, t, nil, nil)
	if err != nil {
		return nil, err
	}
	return data, fsx.SyncDirs(append([]string{s.Layout.Lane(k, dir)}, also...)...)
}

// writeFenced is rewrite that also requires the file on disk to belong to
// owner at attempt: a newer attempt's record that appeared in between is
// swapped back, never overwritten. The caller syncs the folder (or lets
// the move that follows do it). known are the bytes of the record the
// writer put there last (nil: none): see swapIn. It returns the bytes it
// wrote.
func (s *Store) writeFenced(k taskfile.Kind, dir string, t *taskfile.Task, owner string, attempt int, known []byte) ([]byte, error) {
	return s.swapIn(k, dir, t, known, func(old *taskfile.Task) error {
		if old.Owner != owner || old.Attempt != attempt {
			return fmt.Errorf("%w: %s is now owner %q attempt %d", ErrFenced, t.TaskID, old.Owner, old.Attempt)
		}
		return nil
	})
}

// swapIn puts t's encoding (fsynced) in place of the file in dir, only if
// that file exists and check accepts its content. A file that holds
// exactly known (the record this writer put there last) is accepted
// without decoding it: check would pass by construction, and a decode is
// the largest part of a rewrite's own work. The caller syncs the folder.
// It returns the bytes it wrote.
func (s *Store) swapIn(k taskfile.Kind, dir string, t *taskfile.Task, known []byte, check func(old *taskfile.Task) error) ([]byte, error) {
	path := s.Layout.TaskPath(k, dir, t.TaskID)
	data, err := s.EncodeTask(k, t)
	if err != nil {
		return nil, err
	}
	return data, s.swapData(path, dir, t.TaskID, data, known, check)
}

// swapData is swapIn of data, t's encoding, at path.
func (s *Store) swapData(path, dir, id string, data, known []byte, check func(old *taskfile.Task) error) error {
	tmp, err := s.files.WriteTempFrom(path, data, true)
	if err != nil {
		return err
	}
	// Whatever tmp holds at the end (the version swapped out, or ours,
	// unused) is kept as the folder's spare; after a plain rename it is
	// gone.
	spare := true
	defer func() {
		if spare {
			s.files.Spares.Keep(tmp)
		}
	}()
	swapped, err := fsx.ReplaceExisting(tmp, path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: %s has left %s/", ErrFenced, id, dir)
	case errors.Is(err, fsx.ErrNoExchange):
		if rerr := checkRecord(path, known, check); rerr != nil {
			if errors.Is(rerr, os.ErrNotExist) {
				return fmt.Errorf("%w: %s has left %s/", ErrFenced, id, dir)
			}
			if check != nil {
				return rerr
			}
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
		spare = false
		s.files.Spares.Forget(tmp)
		return nil
	case err != nil:
		return err
	}
	if !swapped || check == nil {
		return nil
	}
	// tmp now holds what was there before our swap.
	if rerr := checkRecord(tmp, known, check); rerr != nil {
		// Not ours any more (or unreadable): put the other record back.
		if _, err := fsx.ReplaceExisting(tmp, path); err != nil {
			// tmp still holds the other record: never a spare (the
			// next rewrite would truncate it); left for the operator.
			spare = false
			s.files.Spares.Forget(tmp)
			return fmt.Errorf("fence %s: restore after %v: %w (the other record is in %s)", id, rerr, err, tmp)
		}
		if errors.Is(rerr, ErrFenced) {
			return rerr
		}
		return fmt.Errorf("%w: %v", ErrFenced, rerr)
	}
	return nil
}

// checkRecord reads the task record at p and runs check on it (nil: the
// read alone). A record whose bytes are known passes without a decode.
func checkRecord(p string, known []byte, check func(old *taskfile.Task) error) error {
	data, _, err := fsx.ReadOwn(p, taskfile.MaxRecordSize)
	if err != nil {
		return &TaskPathError{Path: p, Err: err}
	}
	if check == nil || (known != nil && bytes.Equal(data, known)) {
		return nil
	}
	old, err := taskfile.DecodeRecord(data)
	if err != nil {
		return &TaskPathError{Path: p, Err: err}
	}
	return check(old)
}
