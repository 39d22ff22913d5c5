package status

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A task folder other than running/ (pending/, done/, failed/,
// canceled/, an archive month's) changes only by renames: intake, claims,
// ends, priority changes and retries each rename a whole file in or out,
// which moves the folder's mtime. So a folder whose mtime has not moved
// since it was listed holds the same files, and its listing is reused
// without a readdir or a stat of each file. Over a year of tasks (100,000
// in done/) that is what keeps a page from costing a full listing on
// every request (issue 54). running/ is listed each time: its few files
// are rewritten by heartbeats.
//
// Two guards keep the shortcut honest. A listing counts only once it was
// taken racyWindow after the mtime it saw (as git treats a "racily
// clean" index): a change in the same tick of a coarse clock (FAT's 2 s,
// a server's) could leave the mtime where it was. And a listing is taken
// again after listingMaxAge whatever the mtime says, for file systems
// whose folder times lie (a network client's attribute cache, an in-place
// edit by a colleague).
const (
	racyWindow    = 3 * time.Second
	listingMaxAge = 30 * time.Second
)

// folder is what the Snapshotter keeps of one task folder: each file's
// parsed summary by name, and, for a finished folder, its last listing.
type folder struct {
	files map[string]cached
	// The last listing (kept folders only): the folder's mtime just
	// before it, when it began (the wall clock), and what it gave.
	mtime, listedAt time.Time
	tasks           []*task
	rejected        []string
}

type cached struct {
	size  int64
	mtime time.Time
	sum   summary
	ok    bool
}

// kept reports whether dir's listing may be reused while its mtime stays.
func kept(dir string) bool { return dir != taskfile.DirRunning }

// reusable reports whether f's listing still holds for the folder at
// path, whose mtime is now mtime, at wall-clock time wall.
func (f *folder) reusable(mtime, wall time.Time) bool {
	return f != nil && f.tasks != nil && mtime.Equal(f.mtime) &&
		f.listedAt.Sub(f.mtime) >= racyWindow && wall.Sub(f.listedAt) < listingMaxAge
}

// readPath lists the folder at path, whose files are in dir's state,
// parsing the files that changed since the last snapshot; a kept folder
// whose mtime has not moved is not listed again. In failed/ it
// returns the file names of rejected drops instead of parsing them. The
// returned slices are shared with the cache: callers must not change them.
// visited records path, for pruneFolders.
func (s *Snapshotter) readPath(k taskfile.Kind, dir, path string, visited map[string]bool) ([]*task, []string, error) {
	visited[path] = true
	old := s.folders[path]
	wall := s.wall()
	fi, err := os.Lstat(path) // before the listing: a change during it moves the mtime past this one
	if err != nil {
		delete(s.folders, path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil // not created yet: no daemon has run here
		}
		return nil, nil, fmt.Errorf("read spool: %w", err)
	}
	if kept(dir) && old.reusable(fi.ModTime(), wall) {
		return old.tasks, old.rejected, nil
	}
	ents, err := fsx.ReadDir(path)
	if err != nil {
		delete(s.folders, path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("read spool: %w", err)
	}
	var rejectedBase map[string]bool
	if dir == taskfile.DirFailed {
		rejectedBase = taskfile.RejectedDrops(ents)
	}
	nf := &folder{files: make(map[string]cached, len(ents))}
	// The tasks sit side by side in one array (the pointers say where):
	// a page's passes over a year of them then read memory in order.
	buf := make([]task, 0, len(ents))
	out := make([]*task, 0, len(ents))
	var rejected []string
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !taskfile.IsTaskFileName(name) || fsx.IsOwnTemp(name) {
			continue
		}
		base := taskfile.TrimTaskExt(name)
		if rejectedBase[base] {
			rejected = append(rejected, name)
			continue
		}
		p := filepath.Join(path, name)
		sum, ok := summaryIn(old, nf, p, e)
		if !ok || sum.id == "" {
			sum.id = base // unreadable: still a task in this state
		}
		buf = append(buf, task{lane: k, dir: dir, name: name, path: p, sum: sum})
		out = append(out, &buf[len(buf)-1])
	}
	if kept(dir) {
		nf.mtime, nf.listedAt, nf.tasks, nf.rejected = fi.ModTime(), wall, out, rejected
	}
	s.folders[path] = nf
	return out, rejected, nil
}

// summaryIn is the summary of the file at p, from old's cache when its
// size and mtime have not changed, parsed otherwise; kept in nf.
func summaryIn(old, nf *folder, p string, e fs.DirEntry) (summary, bool) {
	fi, err := e.Info()
	if err != nil {
		return summary{}, false
	}
	name := e.Name()
	if old != nil {
		if c, ok := old.files[name]; ok && c.size == fi.Size() && c.mtime.Equal(fi.ModTime()) {
			nf.files[name] = c
			return c.sum, c.ok
		}
	}
	data, _, err := fsx.ReadOwn(p, taskfile.MaxRecordSize)
	if err != nil {
		return summary{}, false // moved away meanwhile, or not a task file
	}
	sum, ok := parseSummary(data)
	nf.files[name] = cached{size: fi.Size(), mtime: fi.ModTime(), sum: sum, ok: ok}
	return sum, ok
}

// pruneFolders forgets the folders of one kind (the archive's, or the
// rest) that the last reading did not visit: a month archived away, a
// lane's folders removed.
func (s *Snapshotter) pruneFolders(visited map[string]bool, archive bool) {
	for p := range s.folders {
		if !visited[p] && s.inArchive(p) == archive {
			delete(s.folders, p)
		}
	}
}

// cachedFiles is how many files' summaries the Snapshotter holds.
func (s *Snapshotter) cachedFiles() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.folders {
		n += len(f.files)
	}
	return n
}
