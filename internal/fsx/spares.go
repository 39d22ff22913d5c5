package fsx

import (
	"os"
	"path/filepath"
	"sync"
	"time"
)

// A rewrite on Linux swaps the new version in with RENAME_EXCHANGE (see
// swapIn), which leaves the old version under the temp's name. Removing
// it frees an inode, and on ext4 without a journal every later inode
// allocation in the group walks past each inode freed in the last 60
// seconds, 360 while its inode table block is dirty (find_inode_bit,
// recently_deleted: RECENTCY_MIN, RECENTCY_DIRTY): with three rewrites a task,
// a burst of tasks slows itself down, and every other create on that disk
// with it (measured: the spool core's throughput halves within 1,000
// tasks). So the old version stays, under its temp name, as a spare: the
// next rewrite in the same folder overwrites it instead of creating a
// file, and a task's life frees no inode at all.
//
// Only a daemon keeps spares (Store.KeepSpares), for its life: a
// short-lived command leaves no temp file behind. A spare is a temp file
// like any other (a crash's leftover is swept by
// its name), kept only briefly: a folder keeps at most maxSpares, each
// for at most SpareTTL, and its mtime is set when it is kept, so that no
// sweeper (this daemon's or another host's) takes it for a leftover.

const (
	maxSpares = 4
	SpareTTL  = 2 * time.Second
)

// Spares are one Store's spare temp files, by folder.
type Spares struct {
	mu   sync.Mutex
	on   bool               // Store.KeepSpares until Store.DropSpares
	dirs map[string][]spare // newest last
	live map[string]bool    // every spare's path, kept or being written: CleanTemps leaves them
}

type spare struct {
	path string
	at   time.Time
}

func NewSpares() *Spares {
	return &Spares{dirs: map[string][]spare{}, live: map[string]bool{}}
}

// Keep makes the temp file path a spare of its folder, or removes it if
// the folder has enough (or spares are not kept).
func (p *Spares) Keep(path string) {
	if p == nil {
		os.Remove(path)
		return
	}
	// The mtime first, outside the lock: a spare is listed only once no
	// sweeper can take it for a leftover.
	now := time.Now()
	if err := os.Chtimes(path, now, now); err == nil {
		dir := filepath.Dir(path)
		p.mu.Lock()
		if p.on && len(p.dirs[dir]) < maxSpares {
			p.dirs[dir] = append(p.dirs[dir], spare{path: path, at: now})
			p.live[path] = true
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
	p.Forget(path)
	os.Remove(path)
}

// Take returns a spare of dir for writing, opened at its start, and its
// size, if there is one; the file must still be a regular file with one
// link (a name somebody linked to anything else is never written). It is
// not emptied: the writer overwrites it and cuts what is left past its
// data (writeTempFrom): emptying it first would free its blocks for the
// write to allocate new ones, a block bitmap and group descriptor change
// (and a syscall) at every rewrite for nothing.
func (p *Spares) Take(dir string) (string, *os.File, int64, bool) {
	if p == nil {
		return "", nil, 0, false
	}
	for {
		p.mu.Lock()
		s := p.dirs[dir]
		if len(s) == 0 {
			p.mu.Unlock()
			return "", nil, 0, false
		}
		sp := s[len(s)-1]
		p.dirs[dir] = s[:len(s)-1]
		delete(p.live, sp.path)
		p.mu.Unlock()
		if time.Since(sp.at) >= SpareTTL {
			// The newest is past its time, so are the rest of the folder's:
			// Maintain's expire would remove them; do it now.
			os.Remove(sp.path)
			p.Expire(time.Now(), SpareTTL)
			return "", nil, 0, false
		}
		f, err := openFileSafe(sp.path, os.O_WRONLY, 0)
		if err != nil {
			continue // gone, or something else is there now: not ours to touch
		}
		fi, err := f.Stat()
		if err == nil && fi.Mode().IsRegular() && linkCount(fi) == 1 {
			p.mu.Lock()
			p.live[sp.path] = true
			p.mu.Unlock()
			return sp.path, f, fi.Size(), true
		}
		f.Close()
		os.Remove(sp.path) // our name; another link keeps its content
	}
}

// Forget drops path from the spares: it was renamed into place, or removed.
func (p *Spares) Forget(path string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	delete(p.live, path)
	p.mu.Unlock()
}

// IsSpare reports whether path is one of the spares (kept or being
// written).
func (p *Spares) IsSpare(path string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live[path]
}

// SetOn starts or stops keeping spares; stopping removes every spare kept.
func (p *Spares) SetOn(on bool) {
	p.mu.Lock()
	p.on = on
	p.mu.Unlock()
	if !on {
		p.Expire(time.Now(), 0)
	}
}

// Expire removes the spares kept longer than ttl (all of them for 0).
func (p *Spares) Expire(now time.Time, ttl time.Duration) {
	var old []string
	p.mu.Lock()
	for dir, s := range p.dirs {
		i := 0
		for i < len(s) && (ttl == 0 || now.Sub(s[i].at) >= ttl) {
			old = append(old, s[i].path)
			delete(p.live, s[i].path)
			i++
		}
		if i == len(s) {
			delete(p.dirs, dir)
		} else {
			p.dirs[dir] = s[i:]
		}
	}
	p.mu.Unlock()
	for _, path := range old {
		os.Remove(path)
	}
}
