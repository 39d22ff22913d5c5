package spool

import (
	"errors"
	"fmt"
	"os"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// ErrFenced is returned by a fenced write when the file on disk is no longer
// the writer's: it is gone, or another owner or attempt has it.
var ErrFenced = errors.New("task file is no longer ours")

var errNoExchange = errors.New("rename exchange not supported")

// rewrite rewrites task t in lane k, folder dir, only if its file is still
// there. Every rewrite that follows a move uses it: a process frozen
// between its move and its rewrite, whose task another process has since
// moved on, gets ErrFenced instead of recreating the file (which would
// leave one task in two folders). On Linux the swap is atomic
// (RENAME_EXCHANGE); elsewhere, and on file systems without it (FUSE, NFS),
// the check and the rename are two steps. The folder is synced, and with
// it the folders also (at once: see syncDirs): the source folder of the
// move that brought the file here.
func (s *Store) rewrite(k taskfile.Kind, dir string, t *taskfile.Task, also ...string) error {
	if err := s.swapIn(k, dir, t, nil); err != nil {
		return err
	}
	return syncDirs(append([]string{s.Layout.Lane(k, dir)}, also...)...)
}

// writeFenced is rewrite that also requires the file on disk to belong to
// owner at attempt: a newer attempt's record that appeared in between is
// swapped back, never overwritten. The caller syncs the folder (or lets
// the move that follows do it).
func (s *Store) writeFenced(k taskfile.Kind, dir string, t *taskfile.Task, owner string, attempt int) error {
	return s.swapIn(k, dir, t, func(old *taskfile.Task) error {
		if old.Owner != owner || old.Attempt != attempt {
			return fmt.Errorf("%w: %s is now owner %q attempt %d", ErrFenced, t.TaskID, old.Owner, old.Attempt)
		}
		return nil
	})
}

// swapIn puts t's encoding (fsynced) in place of the file in dir, only if
// that file exists and check accepts its content. The caller syncs the
// folder.
func (s *Store) swapIn(k taskfile.Kind, dir string, t *taskfile.Task, check func(old *taskfile.Task) error) error {
	path := s.Layout.TaskPath(k, dir, t.TaskID)
	data, err := t.Encode()
	if err != nil {
		return err
	}
	tmp, err := s.files.writeTempFrom(path, data, true)
	if err != nil {
		return err
	}
	// Whatever tmp holds at the end (the version swapped out, or ours,
	// unused) is kept as the folder's spare; after a plain rename it is
	// gone.
	spare := true
	defer func() {
		if spare {
			s.files.spares.keep(tmp)
		}
	}()
	swapped, err := replaceExisting(tmp, path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: %s has left %s/", ErrFenced, t.TaskID, dir)
	case errors.Is(err, errNoExchange):
		old, rerr := ReadTaskFile(path)
		if rerr != nil {
			if errors.Is(rerr, os.ErrNotExist) {
				return fmt.Errorf("%w: %s has left %s/", ErrFenced, t.TaskID, dir)
			}
			if check != nil {
				return rerr
			}
		} else if check != nil {
			if err := check(old); err != nil {
				return err
			}
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
		spare = false
		s.files.spares.forget(tmp)
		return nil
	case err != nil:
		return err
	}
	if !swapped || check == nil {
		return nil
	}
	// tmp now holds what was there before our swap.
	old, rerr := ReadTaskFile(tmp)
	if rerr == nil {
		rerr = check(old)
	}
	if rerr != nil {
		// Not ours any more (or unreadable): put the other record back.
		if _, err := replaceExisting(tmp, path); err != nil {
			// tmp still holds the other record: never a spare (the
			// next rewrite would truncate it); left for the operator.
			spare = false
			s.files.spares.forget(tmp)
			return fmt.Errorf("fence %s: restore after %v: %w (the other record is in %s)", t.TaskID, rerr, err, tmp)
		}
		if errors.Is(rerr, ErrFenced) {
			return rerr
		}
		return fmt.Errorf("%w: %v", ErrFenced, rerr)
	}
	return nil
}
