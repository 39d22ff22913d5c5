package spool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// CleanTemps removes spoolgate's leftover temp files from every folder of
// the spool (output/ and notify/ with their subfolders included), by tempLeftover's rule,
// and returns how many it removed. Start-up runs it, and the daemon's
// periodic upkeep (Maintain) every staleAfter/2 after the last sweep:
// recovery's sweep counts, so the first rescan does not list every
// folder (100,000 pending names) a second time.
func (s *Store) CleanTemps() int {
	now := time.Now()
	s.guard.mu.Lock()
	s.guard.lastSweep = now
	s.guard.mu.Unlock()
	n := 0
	for _, dir := range append(s.Layout.Folders(), s.notifyDir()) {
		n += s.cleanTempsIn(dir, now, isDropBox(dir), 0)
	}
	return n
}

// notifyDir holds the notifications' markers (lanes/notify), written
// with fsx.WriteFileNew: its temp files are swept too, in every subfolder.
func (s *Store) notifyDir() string { return filepath.Join(s.Layout.Root, "notify") }

func isDropBox(dir string) bool { return filepath.Base(dir) == taskfile.DirIncoming }

func (s *Store) cleanTempsIn(dir string, now time.Time, dropBox bool, depth int) int {
	f, err := fsx.OpenDirNoFollow(dir)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	recurse := depth < 32 && (strings.HasPrefix(dir, s.Layout.Output()) || strings.HasPrefix(dir, s.notifyDir()))
	for {
		ents, err := f.ReadDir(1024)
		for _, e := range ents {
			name := e.Name()
			if recurse && e.IsDir() {
				n += s.cleanTempsIn(filepath.Join(dir, name), now, false, depth+1)
				continue
			}
			if !fsx.IsOwnTemp(name) || !e.Type().IsRegular() {
				continue // no path built: pending/ may hold 100,000 names
			}
			p := filepath.Join(dir, name)
			if s.files.Spares.IsSpare(p) {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			why := fsx.TempLeftover(name, s.files.Tag, fi.ModTime(), now, s.Cfg.StaleAfter.D(), dropBox)
			if why == "" {
				continue
			}
			if err := os.Remove(p); err == nil {
				n++
				s.Log.Info("removed leftover temp file", "path", p, "why", why)
			} else if !errors.Is(err, os.ErrNotExist) {
				s.Limiter().Fail("temp:"+p, "leftover temp file not removed", err, "path", p)
			}
		}
		if err != nil {
			return n
		}
	}
}
