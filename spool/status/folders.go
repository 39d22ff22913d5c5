package status

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
//
// A finished folder (done/, failed/, canceled/, an archive month's) whose
// mtime moved is listed by its entries' names and inode numbers only
// (fsx.ReadDirInodes): its files are written once and only renamed in or
// out, so a name still on the inode it had is the file already read, and
// only the new ones are stat'ed and parsed. On a busy spool that is
// every request after a task ends: a stat of each of 100,000 files cost
// such a request 385 ms (issue 54's note). Every statAfter the folder is
// listed with a stat of each file again, for a colleague's edit in place
// (the same inode, new bytes) or a file system whose inode numbers are
// not stable.
const (
	racyWindow    = 3 * time.Second
	listingMaxAge = 30 * time.Second
	statAfter     = 5 * time.Minute
)

// folder is what the Snapshotter keeps of one task folder: each file's
// parsed summary by name, and, for a finished folder, its last listing.
type folder struct {
	files map[string]*cached // shared by the listings that found them unchanged: never changed once made
	// The last listing (kept folders only): the folder's mtime just
	// before it, when it began (the wall clock), and what it gave;
	// statedAt is when its files were last stat'ed each.
	mtime, listedAt, statedAt time.Time
	tasks                     []*task
	rejected                  []string
}

type cached struct {
	size  int64
	mtime time.Time
	ino   uint64 // 0: not known
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
	// By names and inodes when the files need no stat: a finished
	// folder's, stat'ed within statAfter.
	byInode := isFinal(dir) && old != nil && old.tasks != nil && wall.Sub(old.statedAt) < statAfter
	ents, err := fsx.ReadDirInodes(path)
	if err != nil {
		delete(s.folders, path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("read spool: %w", err)
	}
	var rejectedBase map[string]bool
	if dir == taskfile.DirFailed {
		rejectedBase = map[string]bool{} // as taskfile.RejectedDrops
		for _, e := range ents {
			if b, ok := strings.CutSuffix(e.Name, taskfile.ReasonFileName("")); ok {
				rejectedBase[b] = true
			}
		}
	}
	nf := &folder{files: make(map[string]*cached, len(ents))}
	// The tasks of a full listing sit side by side in one array (the
	// pointers say where): a page's passes over a year of them then read
	// memory in order. A listing by inodes keeps the tasks it found
	// unchanged where they are, and makes only the new ones.
	var buf []task
	if !byInode {
		buf = make([]task, 0, len(ents))
	}
	out := make([]*task, 0, len(ents))
	var rejected []string
	j := 0 // byInode: a cursor into old.tasks, both in name order
	for _, e := range ents {
		name := e.Name
		if (e.Known && !e.Type.IsRegular()) || !taskfile.IsTaskFileName(name) || fsx.IsOwnTemp(name) {
			continue
		}
		base := taskfile.TrimTaskExt(name)
		if rejectedBase[base] {
			rejected = append(rejected, name)
			continue
		}
		if byInode {
			if t := old.unchanged(&j, e); t != nil {
				nf.files[name] = old.files[name]
				out = append(out, t)
				continue
			}
		}
		p := filepath.Join(path, name)
		sum, ok, regular := summaryIn(old, nf, p, e)
		if !regular {
			continue // a link or a fifo the entry's type did not tell
		}
		if !ok || sum.id == "" {
			sum.id = base // unreadable: still a task in this state
		}
		t := task{lane: k, dir: dir, name: name, path: p, sum: sum}
		if len(buf) < cap(buf) {
			buf = append(buf, t)
			out = append(out, &buf[len(buf)-1])
		} else {
			out = append(out, &t)
		}
	}
	if kept(dir) {
		nf.mtime, nf.listedAt, nf.tasks, nf.rejected, nf.statedAt = fi.ModTime(), wall, out, rejected, wall
		if byInode {
			nf.statedAt = old.statedAt
		}
	}
	s.folders[path] = nf
	return out, rejected, nil
}

// unchanged is f's task for the entry e when e is still on the inode f
// read it from; *j is a cursor into f.tasks, moved along as the entries
// come, both in name order. Tasks are never changed once listed: the
// next listing may share them.
func (f *folder) unchanged(j *int, e fsx.DirInode) *task {
	if e.Ino == 0 || !e.Known {
		return nil
	}
	for *j < len(f.tasks) && f.tasks[*j].name < e.Name {
		*j++
	}
	if *j == len(f.tasks) || f.tasks[*j].name != e.Name {
		return nil
	}
	if c, ok := f.files[e.Name]; ok && c.ino == e.Ino {
		return f.tasks[*j]
	}
	return nil
}

// summaryIn is the summary of the file at p, from old's cache when its
// size and mtime have not changed, parsed otherwise; kept in nf. regular
// is false for an entry that a stat shows is not a regular file.
func summaryIn(old, nf *folder, p string, e fsx.DirInode) (sum summary, ok, regular bool) {
	name := e.Name
	fi, err := os.Lstat(p)
	if err != nil {
		return summary{}, false, true // moved away meanwhile: still listed
	}
	if !fi.Mode().IsRegular() {
		return summary{}, false, false
	}
	if old != nil {
		if c, found := old.files[name]; found && c.size == fi.Size() && c.mtime.Equal(fi.ModTime()) {
			if c.ino != e.Ino {
				c = &cached{size: c.size, mtime: c.mtime, ino: e.Ino, sum: c.sum, ok: c.ok}
			}
			nf.files[name] = c
			return c.sum, c.ok, true
		}
	}
	data, _, err := fsx.ReadOwn(p, taskfile.MaxRecordSize)
	if err != nil {
		return summary{}, false, true // moved away meanwhile, or not a task file
	}
	sum, ok = parseSummary(data)
	nf.files[name] = &cached{size: fi.Size(), mtime: fi.ModTime(), ino: e.Ino, sum: sum, ok: ok}
	return sum, ok, true
}

// isFinal reports whether dir is a folder of finished tasks.
func isFinal(dir string) bool { return slices.Contains(taskfile.FinalDirs, dir) }

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
