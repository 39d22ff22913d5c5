package spool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Recover repairs what a crash can leave behind in the spool's non-running
// folders and returns each lane's pending tasks as of makes them (the
// lanes' index entries: the index is theirs):
//   - leftover temp files of ours are removed (CleanTemps);
//   - pending files not yet normalized (a crash between intake's move and
//     its rewrite, or another daemon's intake in flight) are left out of
//     the index: the daemon's periodic merge normalizes them once they have
//     stayed so for staleAfter;
//   - files in failed/ and canceled/ whose state disagrees with their
//     folder (a crash between a move and its rewrite) get the folder's
//     state.
//
// Tasks in running/ are the lanes' business: reclaim decides them.
func Recover[E any](s *Store, of func(*taskfile.Task) E) (map[taskfile.Kind][]E, error) {
	out := map[taskfile.Kind][]E{}
	s.CleanTemps()
	for _, k := range taskfile.Kinds {
		entries, err := LoadPending(s, k, of)
		if err != nil {
			return nil, err
		}
		out[k] = entries
		for _, d := range []string{taskfile.DirFailed, taskfile.DirCanceled} {
			if err := s.fixFinalStates(k, d); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// LoadPending reads every task in lane k's pending/, normalizing any that a
// crash left half-done, and returns of of each (of is called from several
// goroutines at once, and sees only the index fields of a task read with
// the line scanner). A file that does
// not parse is moved to failed/ with TASKID.error beside it.
func LoadPending[E any](s *Store, k taskfile.Kind, of func(*taskfile.Task) E) ([]E, error) {
	dir := s.Layout.Lane(k, taskfile.DirPending)
	// Names only: a DirEntry per file would cost 100,000 stats' worth of
	// memory at the start-up peak, and the order comes from the index.
	names, err := fsx.ReadDirNames(dir)
	if err != nil {
		return nil, fmt.Errorf("load pending: %w", err)
	}
	ids := names[:0]
	for _, name := range names {
		if taskfile.IsTaskFileName(name) && filepath.Ext(name) == ".yaml" {
			ids = append(ids, taskfile.TrimTaskExt(name))
		}
	}
	// Reading is I/O-bound on a cold cache and parse-bound on a warm one:
	// a few workers serve both.
	const workers = 4
	results := make([]E, len(ids))
	loaded := make([]bool, len(ids)) // false for a file left out
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(ids); i += workers {
				t, err := s.loadPendingFast(k, ids[i])
				if errors.Is(err, errNotNormalized) {
					continue
				}
				if err != nil {
					if !errors.Is(err, os.ErrNotExist) { // else claimed meanwhile by another daemon
						s.Log.Error("pending task unreadable", "lane", k, "taskId", ids[i], "err", err)
					}
					continue
				}
				results[i], loaded[i] = of(t), true
			}
		}(w)
	}
	wg.Wait()
	out := results[:0]
	for i, e := range results {
		if loaded[i] {
			out = append(out, e)
		}
	}
	return out, nil
}

// loadPendingFast reads the index fields of pending/ID.yaml with the line
// scanner when the file is in spoolgate's own form, else in full.
//
// A file not yet normalized is not touched here: on a shared spool it is
// most likely another daemon's intake between its move and its rewrite,
// and rewriting it could recreate it after that daemon claimed it. It is
// left out of the index; the daemon's periodic merge normalizes it once it
// has stayed so for staleAfter (a crash's leftover).
func (s *Store) loadPendingFast(k taskfile.Kind, id string) (*taskfile.Task, error) {
	data, _, err := fsx.ReadOwn(s.Layout.TaskPath(k, taskfile.DirPending, id), taskfile.MaxRecordSize)
	if err == nil {
		if t, ok := scanPending(data); ok && t.TaskID == id && t.ModelKind == k {
			return &t, nil
		}
		if t, derr := taskfile.DecodeRecord(data); derr == nil {
			if normalizedPending(t, k, id) {
				return t, nil // normalized, in a form the scanner declines
			}
			return nil, errNotNormalized
		}
	}
	return s.loadPendingOne(k, id) // unreadable: it parks the file in failed/
}

// normalizedPending reports whether t, read from lane k's pending/ID, is
// in the form intake leaves: the one test of "normalized pending".
func normalizedPending(t *taskfile.Task, k taskfile.Kind, id string) bool {
	return t.TaskID == id && t.State == taskfile.StatePending && !t.SubmittedAt.IsZero() && t.ModelKind == k
}

// errNotNormalized marks a pending file left for the daemon's merge.
var errNotNormalized = errors.New("pending file not yet normalized: left for the periodic merge")

// loadPendingOne reads pending/ID.yaml, normalizing it if needed.
func (s *Store) loadPendingOne(k taskfile.Kind, id string) (*taskfile.Task, error) {
	t, err := s.Read(k, taskfile.DirPending, id)
	if err != nil {
		var tp *TaskPathError
		if errors.As(err, &tp) && !errors.Is(err, os.ErrNotExist) {
			// Not a task we can run: park it in failed/ with the reason.
			_, rerr := s.reject(s.Layout.TaskPath(k, taskfile.DirPending, id), id+".yaml", k, taskfile.Rejectf(taskfile.ClassInvalid, "%v", tp.Err))
			if rerr != nil {
				return nil, rerr
			}
		}
		return nil, err
	}
	if !normalizedPending(t, k, id) {
		t.TaskID, t.ModelKind = id, k
		if t.State != taskfile.StatePending && t.State != taskfile.StateRunning {
			// a fresh drop moved in by intake before its rewrite
			t.ResetForIntake()
			t.TaskID, t.ModelKind = id, k
			// Its attachments are checked and recorded again; one that no
			// longer passes leaves no record, and the attempt fails as
			// invalid ("not checked at intake") instead of sending it.
			if rej := s.CheckAttachments(t, s.Layout.Lane(k, taskfile.DirIncoming)); rej != nil {
				s.Log.Warn("recovered drop's attachments", "lane", k, "taskId", id, "reason", rej.Msg)
			}
		}
		t.State = taskfile.StatePending
		if t.SubmittedAt.IsZero() {
			t.SubmittedAt = now()
		}
		if _, err := s.rewrite(k, taskfile.DirPending, t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (s *Store) fixFinalStates(k taskfile.Kind, dir string) error {
	want := taskfile.FolderState[dir]
	ents, err := fsx.ReadDir(s.Layout.Lane(k, dir))
	if err != nil {
		return fmt.Errorf("recover %s: %w", dir, err)
	}
	rejected := taskfile.RejectedDrops(ents)
	for _, e := range ents {
		name := e.Name()
		if filepath.Ext(name) != ".yaml" || !taskfile.IsTaskFileName(name) {
			continue
		}
		id := taskfile.TrimTaskExt(name)
		if rejected[id] {
			continue // a rejected drop, kept as it came
		}
		// A foreign record is never sealed by a repair: it stays as it
		// came, and no daemon acts on it.
		t, foreign, err := s.readChecked(k, dir, id)
		if err != nil || foreign != nil || t.State == want {
			continue
		}
		t.State = want
		if t.FinishedAt.IsZero() {
			t.FinishedAt = now()
		}
		if t.ErrorClass == "" && want == taskfile.StateCanceled {
			t.ErrorClass = taskfile.ClassCanceled
		}
		if _, err := s.rewrite(k, dir, t); err != nil && !errors.Is(err, ErrFenced) {
			return err
		}
		s.Log.Info("repaired state after crash", "lane", k, "taskId", id, "state", want)
	}
	return nil
}

// MergePending returns the tasks in lane k's pending/ that indexed does
// not know: tasks that reached pending/ without this daemon's intake
// (another daemon on a share, another host's recovery). A file not yet
// normalized is, on a shared spool, most likely another daemon's intake
// between its move and its rewrite; normalizing it here would race that
// rewrite, and once the other daemon has claimed the task our rename
// would recreate pending/ID, so the task would run twice (seen on a
// two-host bindfs share). Such a file is left alone for the pending grace
// (see Timing); still not normalized then, its intake was cut short and
// it is normalized here. A file that does not parse is rejected into
// failed/. Call it for one lane from one goroutine.
func (s *Store) MergePending(k taskfile.Kind, now time.Time, indexed func(id string) bool) []*taskfile.Task {
	// Names only, sorted as a listing: with 100,000 pending, a DirEntry
	// each held 12 MB at once, right after start-up.
	names, err := fsx.ReadDirNames(s.Layout.Lane(k, taskfile.DirPending))
	if err != nil {
		return nil
	}
	slices.Sort(names)
	prefix := string(k) + "/"
	seen := map[string]bool{}
	defer s.unnormalized.forget(func(key string) bool { return !strings.HasPrefix(key, prefix) || seen[key] })
	var out []*taskfile.Task
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") || !taskfile.IsTaskFileName(name) {
			continue
		}
		id := taskfile.TrimTaskExt(name)
		if indexed(id) {
			continue
		}
		seen[prefix+id] = true
		if !s.settledPending(k, id, now) {
			continue
		}
		if t, err := s.loadPendingOne(k, id); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// settledPending reports whether MergePending may load pending/ID now:
// it is normalized (loading writes nothing), unreadable (loading rejects
// it), or has stayed not normalized for the pending grace.
func (s *Store) settledPending(k taskfile.Kind, id string, now time.Time) bool {
	t, err := s.Read(k, taskfile.DirPending, id)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	if normalizedPending(t, k, id) {
		return true
	}
	return s.unnormalized.lasted(string(k)+"/"+id, now, s.Cfg.Timing().PendingGrace)
}

// scanPending is ScanSummary for the index: a pending task in spoolgate's
// own, normalized form.
func scanPending(data []byte) (taskfile.Task, bool) {
	s, ok := taskfile.ScanSummary(data)
	// A task sent before (web) is decoded in full: its index entry needs
	// the send's account (see lanes.Entry.ConvAccount).
	if !ok || s.State != taskfile.StatePending || s.SubmittedAt.IsZero() || bytes.Contains(data, []byte("\nsend:\n")) {
		return taskfile.Task{}, false
	}
	return taskfile.Task{TaskID: s.TaskID, ModelKind: s.ModelKind, Model: s.Model, Batch: s.Batch, Output: s.Output, Priority: s.Priority,
		State: s.State, SubmittedAt: s.SubmittedAt, NotBefore: s.NotBefore}, true
}
