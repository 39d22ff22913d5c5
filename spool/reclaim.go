package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// ReclaimAction is what Reclaim did with one task.
type ReclaimAction int

const (
	// Completed: a crash between a final write and its move; the move is
	// done now (the record already holds the final state).
	Completed ReclaimAction = iota + 1
	// Returned: a claim cut short before it marked the task; it is back in
	// pending/ as it was.
	Returned
	// Retried: a stale attempt; the task is back in pending/ with its
	// attempt spent, due after Timing.ReclaimRetryDelay.
	Retried
	// Failed: a stale attempt that was the last allowed; failed as stale.
	Failed
)

// Reclaimed is one task Reclaim took over.
type Reclaimed struct {
	Action ReclaimAction
	Task   *taskfile.Task // as it is now on disk
	Reason string         // why it was taken over
}

// Reclaim looks at each task in lane k's running/ that held (this
// process's own runners) does not claim, and takes over those nobody runs
// any more: an owner on this host that is gone (at once), a last sign of
// life older than staleAfter (the one rule, see Stale), or a claim left
// unmarked for longer than the claim grace. A stale attempt goes back to
// pending/ while attempts remain, else to failed/ as stale. The move out
// of running/ is what only one reclaimer wins; the old owner, if it wakes,
// finds the file gone or not its own and writes nothing.
//
// Reclaim remembers unmarked claims between calls to time them; call it
// for one lane from one goroutine.
func (s *Store) Reclaim(k taskfile.Kind, now time.Time, held func(id string) bool) ([]Reclaimed, error) {
	dir := s.Layout.Lane(k, taskfile.DirRunning)
	ents, err := fsx.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reclaim: list running: %w", err)
	}
	prefix := string(k) + "/"
	seen := map[string]bool{}
	defer s.unmarked.forget(func(key string) bool { return !strings.HasPrefix(key, prefix) || seen[key] })
	var out []Reclaimed
	for _, e := range ents {
		name := e.Name()
		if !taskfile.IsTaskFileName(name) {
			continue
		}
		id := taskfile.TrimTaskExt(name)
		seen[prefix+id] = true
		if held(id) {
			continue
		}
		t, err := s.Read(k, taskfile.DirRunning, id)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				s.unreadableRunning(k, name, err, now)
			}
			continue
		}
		s.Limiter().Forget("running:" + filepath.Join(dir, name))
		reason := s.orphanReason(k, t, now)
		if reason == "" {
			continue
		}
		if held(id) {
			continue // claimed, or finished, by this process while we looked
		}
		if r, ok := s.reclaimOne(k, t, reason, now); ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// orphanReason says why a running task that no runner of this process
// holds must be taken over, or "" if it must be left alone.
func (s *Store) orphanReason(k taskfile.Kind, t *taskfile.Task, now time.Time) string {
	tm := s.Cfg.Timing()
	sum := taskfile.SummaryOf(t)
	if t.Owner == "" || sum.LastSign().IsZero() {
		// Moved into running/ but not yet rewritten: a claim in progress
		// (perhaps another daemon's), or one a crash cut short. Its times
		// say nothing, so judge by how long we have watched it so.
		if s.unmarked.lasted(string(k)+"/"+t.TaskID, now, tm.ClaimGrace) {
			return fmt.Sprintf("claimed but not marked running for over %s", tm.ClaimGrace)
		}
		return ""
	}
	host, pid := ParseOwner(t.Owner)
	if host == s.Cfg.Host {
		if pid == os.Getpid() {
			return fmt.Sprintf("owner %s is this daemon, which does not run it (restarted with the same pid)", t.Owner)
		}
		if fsx.ProcessGone(pid) {
			return fmt.Sprintf("owner %s is no longer running", t.Owner)
		}
	}
	if age, stale := taskfile.Stale(sum, now, tm.StaleAfter); stale {
		return fmt.Sprintf("heartbeat %s old, over staleAfter %s (owner %s)", age.Round(time.Second), tm.StaleAfter, t.Owner)
	}
	// A last sign of life in the future (a clock far off, or a planted
	// file dated 2099) counts from when this store first saw it: unless
	// it changes (a live owner's next heartbeat), it goes stale like any
	// other, instead of counting as running for ever.
	if last := sum.LastSign(); last.After(now) {
		at, _ := s.clampFuture("running", s.Layout.TaskPath(k, taskfile.DirRunning, t.TaskID), last, now)
		if now.Sub(at) > tm.StaleAfter {
			return fmt.Sprintf("heartbeat %s in the future, not renewed for over staleAfter %s since first seen (owner %s)", last.UTC().Format(time.RFC3339), tm.StaleAfter, t.Owner)
		}
	}
	return ""
}

func (s *Store) reclaimOne(k taskfile.Kind, t *taskfile.Task, reason string, now time.Time) (Reclaimed, bool) {
	id := t.TaskID
	switch {
	case t.State.Final():
		if err := s.move(k, taskfile.DirRunning, taskfile.StateFolder(t.State), id); err != nil {
			return Reclaimed{}, false
		}
		return Reclaimed{Action: Completed, Task: t, Reason: reason}, true
	case t.State == taskfile.StatePending:
		if err := s.move(k, taskfile.DirRunning, taskfile.DirPending, id); err != nil {
			return Reclaimed{}, false
		}
		return Reclaimed{Action: Returned, Task: t, Reason: reason}, true
	}
	// Look once more right before the move: a record that reached a final
	// state since we read it goes to its final folder, never back to
	// pending (its runner finished it; running it again would run it
	// twice), and one that changed otherwise has a live owner.
	if cur, err := s.Read(k, taskfile.DirRunning, id); err != nil {
		return Reclaimed{}, false
	} else if cur.State.Final() {
		return s.reclaimOne(k, cur, reason, now)
	} else if cur.Owner != t.Owner || cur.Attempt != t.Attempt || !cur.HeartbeatAt.Equal(t.HeartbeatAt) {
		return Reclaimed{}, false
	}
	r := Reclaimed{Action: Failed, Task: t, Reason: reason}
	to := taskfile.DirFailed
	if t.Attempt < s.Cfg.MaxAttempts() {
		r.Action, to = Retried, taskfile.DirPending
	}
	if err := s.move(k, taskfile.DirRunning, to, id); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.Limiter().Fail("reclaim:"+s.Layout.TaskPath(k, taskfile.DirRunning, id), "reclaim failed", err, "lane", k, "taskId", id)
		}
		return Reclaimed{}, false
	}
	t.Error, t.ErrorClass = "stale: "+reason, taskfile.ClassStale
	t.Owner, t.BrowserPID = "", 0
	outcome := taskfile.AttemptFailed
	if to == taskfile.DirPending {
		outcome = taskfile.AttemptRetried
	}
	// The attempt ended at its last sign of life, not at the reclaim.
	t.CloseAttempt(taskfile.SummaryOf(t).LastSign(), outcome, taskfile.ClassStale, time.Time{})
	if to == taskfile.DirPending {
		t.State = taskfile.StatePending
		t.NotBefore = now.Add(s.Cfg.Timing().ReclaimRetryDelay)
	} else {
		t.State, t.FinishedAt = taskfile.StateFailed, now
	}
	if _, err := s.rewrite(k, to, t); err != nil {
		s.Limiter().Fail("reclaim rewrite:"+s.Layout.TaskPath(k, to, id), "reclaim: rewrite failed; recovery repairs the state", err, "lane", k, "taskId", id)
	}
	return r, true
}

// firstSeen remembers, per key, when a condition was first observed, so
// a judgment can wait for it to last: a hard link that may be another
// daemon's move in flight, an unmarked claim, a pending file not yet
// normalized. Safe for concurrent use.
type firstSeen struct {
	mu sync.Mutex
	m  map[string]time.Time
}

// lasted records the first sighting of key and reports whether it has
// now been seen for at least d.
func (f *firstSeen) lasted(key string, now time.Time, d time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]time.Time{}
	}
	first, ok := f.m[key]
	if !ok {
		f.m[key] = now
		return false
	}
	return now.Sub(first) >= d
}

// drop forgets key.
func (f *firstSeen) drop(key string) {
	f.mu.Lock()
	delete(f.m, key)
	f.mu.Unlock()
}

// forget keeps only the keys that keep accepts.
func (f *firstSeen) forget(keep func(key string) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.m {
		if !keep(k) {
			delete(f.m, k)
		}
	}
}

// unreadableRunning handles a file in running/ that is not a task spoolgate
// can read (garbage, a fifo, too large): logged once, then counted, and
// once it has been still for staleAfter (its mtime, or from when first
// seen for an mtime in the future) it leaves running/ as a rejected file
// in failed/, its bytes untouched and the reason beside it, so it neither
// counts as running for ever nor logs at every rescan.
func (s *Store) unreadableRunning(k taskfile.Kind, name string, err error, now time.Time) {
	p := filepath.Join(s.Layout.Lane(k, taskfile.DirRunning), name)
	s.Limiter().Fail("running:"+p, "running task unreadable: it moves to failed/ once staleAfter old", err, "lane", k, "file", name)
	fi, lerr := os.Lstat(p)
	if lerr != nil {
		return
	}
	at, _ := s.clampFuture("running", p, fi.ModTime(), now)
	if now.Sub(at) <= s.Cfg.Timing().StaleAfter {
		return
	}
	res, rerr := s.reject(p, name, k, taskfile.Rejectf(taskfile.ClassInvalid, "unreadable in running/ (%s): moved here untouched", taskfile.OneLine(err.Error())))
	if rerr != nil {
		s.Limiter().Fail("running reject:"+p, "unreadable running file not moved", rerr, "lane", k, "file", name)
		return
	}
	s.Limiter().Forget("running:" + p)
	s.Log.Warn("unreadable running file moved to failed/", "lane", k, "file", name, "to", s.rel(res.Path))
}
