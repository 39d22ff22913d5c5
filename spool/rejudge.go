package spool

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
)

// A rejected drop that changes afterwards was still being written: its
// writer went on writing into the file after intake judged a part of it
// (a copy engine that paused longer than settle, a client that holds the
// file open). The choice here: such a file goes back to the incoming/
// folder it came from, under its own name, and its reason file is
// removed; intake then judges it anew, by the settle rule, as the whole
// file it now is. So the final state always matches the final bytes.
//
// Rejections are watched for RejudgeWindow after they happen, by this
// process (a restart forgets them; a file changed later is left in
// failed/ with its reason, for `spoolgate retry`).
const RejudgeWindow = time.Hour

// maxWatchedRejects bounds the memory a flood of bad drops can take: past
// it the oldest are no longer watched.
const maxWatchedRejects = 10000

type rejected struct {
	incoming, name string    // where it came from
	errPath        string    // its reason file
	st             fsx.Stamp // as it was once rejected
	at             time.Time
}

type rejectWatch struct {
	mu sync.Mutex
	m  map[string]rejected // failed/ path -> what it was
}

// watchRejected remembers a rejected drop, now at dst, to judge it again
// if it changes.
func (s *Store) watchRejected(dst, errPath, incoming, name string) {
	fi, err := os.Lstat(dst)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	w := &s.rejects
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]rejected{}
	}
	if len(w.m) >= maxWatchedRejects {
		var oldest string
		for p, r := range w.m {
			if oldest == "" || r.at.Before(w.m[oldest].at) {
				oldest = p
			}
		}
		delete(w.m, oldest)
	}
	w.m[dst] = rejected{incoming: incoming, name: name, errPath: errPath, st: fsx.StampOf(fi), at: time.Now()}
}

// Rejudge moves every watched rejected drop that changed since its
// rejection back to its incoming/ folder and removes its reason file; it
// returns the paths it moved back to. The daemon calls it at each rescan.
func (s *Store) Rejudge() []string {
	w := &s.rejects
	w.mu.Lock()
	due := map[string]rejected{}
	for p, r := range w.m {
		due[p] = r
	}
	w.mu.Unlock()
	var out []string
	for p, r := range due {
		forget := func() { w.mu.Lock(); delete(w.m, p); w.mu.Unlock() }
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || time.Since(r.at) > RejudgeWindow {
			forget() // retried, removed, or watched long enough
			continue
		}
		if fsx.StampOf(fi) == r.st {
			continue
		}
		dst := filepath.Join(r.incoming, r.name)
		err = s.files.RenameNoReplace(p, dst)
		switch {
		case errors.Is(err, os.ErrExist):
			continue // a new drop of that name came meanwhile: look again at the next rescan
		case err != nil:
			if !errors.Is(err, os.ErrNotExist) {
				s.Log.Warn("rejected drop changed, but cannot go back to incoming", "file", p, "err", err)
			}
			forget()
			continue
		}
		forget()
		if err := os.Remove(r.errPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.Log.Warn("rejected drop judged again, but its old reason stays", "file", r.errPath, "err", err)
		}
		s.Log.Info("rejected drop changed after its rejection: judged again", "file", p, "incoming", dst)
		out = append(out, dst)
	}
	return out
}
