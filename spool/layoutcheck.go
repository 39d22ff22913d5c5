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

// laneFolders are the folders inside each lane, in the order Create makes
// them.
var laneFolders = []string{taskfile.DirIncoming, taskfile.DirPending, taskfile.DirRunning, taskfile.DirDone, taskfile.DirFailed, taskfile.DirCanceled, taskfile.DirCancel, taskfile.DirPriority, taskfile.DirLogs}

// Folders lists every folder of the layout below the root, each after its
// parent.
func (l Layout) Folders() []string {
	dirs := []string{l.Incoming(), l.Output(), l.Accounts()}
	for _, k := range taskfile.Kinds {
		dirs = append(dirs, filepath.Join(l.Root, string(k)))
		for _, d := range laneFolders {
			dirs = append(dirs, l.Lane(k, d))
		}
	}
	return dirs
}

// createChecked makes the root (and its parents: the operator's path, in
// the config) and then each folder of the layout one level at a time,
// checking each is a real folder before making anything inside it: a
// symlink put in place of a folder is refused, never created through.
func (l Layout) createChecked() error {
	if err := os.MkdirAll(l.Root, DirPerm); err != nil {
		return fmt.Errorf("create spool folder: %w", err)
	}
	for _, d := range l.Folders() {
		if err := os.Mkdir(d, DirPerm); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create spool folder: %w", err)
		}
		if err := fsx.CheckFolder(d); err != nil {
			return err
		}
	}
	return nil
}

// CheckFolders checks that the root is a folder (it may be a symlink: the
// operator's choice) and that every folder of the layout below it is a
// real folder, not a symlink or anything else. Missing folders are not an
// error here (Create makes them).
func (l Layout) CheckFolders() error {
	if fi, err := os.Stat(l.Root); err != nil {
		return fmt.Errorf("spool root: %w", err)
	} else if !fi.IsDir() {
		return &fsx.NotRegularError{Path: l.Root, Kind: fsx.KindName(fi.Mode()), Want: fsx.WantFolder}
	}
	for _, d := range l.Folders() {
		if err := fsx.CheckFolder(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// guard is the Store's state of the spool's safety: the last layout fault
// seen, and which problems were already logged, so each is logged once.
type guard struct {
	mu        sync.Mutex
	fault     error // non-nil while a folder of the layout is not a real folder
	lastSweep time.Time
	told      map[string]bool // problems logged once: task logs, switch files
	// outputOwner, set by the daemon, names the pending or running task
	// that will write an output path (see SetOutputOwner).
	outputOwner func(key string) (string, bool)
}

// tellOnce reports whether key is new; at most 10,000 keys are kept, then
// the set starts afresh (a problem may then be logged once more).
func (g *guard) tellOnce(key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.told[key] {
		return false
	}
	if g.told == nil || len(g.told) >= 10000 {
		g.told = map[string]bool{}
	}
	g.told[key] = true
	return true
}

// CheckLayout checks the spool's folders (Layout.CheckFolders) and keeps
// the result for LayoutFault. A new fault is logged as an error; its end
// is logged too. The daemon runs it at start (a fault is then a start-up
// error), at each rescan and before each claiming round.
func (s *Store) CheckLayout() error {
	err := s.Layout.CheckFolders()
	g := &s.guard
	g.mu.Lock()
	prev := g.fault
	g.fault = err
	g.mu.Unlock()
	switch {
	case err != nil && (prev == nil || prev.Error() != err.Error()):
		s.Log.Error("spool folder unsafe: intake and claiming held until it is a real folder again", "err", err)
	case err == nil && prev != nil:
		s.Log.Info("spool folders are real folders again: intake and claiming go on")
	}
	return err
}

// LayoutFault is the fault the last CheckLayout found, or nil.
func (s *Store) LayoutFault() error {
	s.guard.mu.Lock()
	defer s.guard.mu.Unlock()
	return s.guard.fault
}

// Maintain is the daemon's periodic upkeep, run at each rescan: it checks
// the layout, and every staleAfter/2 removes leftover temp files.
func (s *Store) Maintain() {
	s.CheckLayout()
	g := &s.guard
	g.mu.Lock()
	due := time.Since(g.lastSweep) >= s.Cfg.StaleAfter.D()/2
	if due {
		g.lastSweep = time.Now() // here too: two Maintains at once sweep once
	}
	g.mu.Unlock()
	// Spares past their time go first (see spares.go): the sweep below
	// never meets one of ours.
	s.files.Spares.Expire(time.Now(), fsx.SpareTTL)
	if due {
		s.CleanTemps()
	}
}

// switchOn is fsx.SwitchOn that logs, once per path and kind, a switch file
// that is not a regular file and so is not honoured.
func (s *Store) switchOn(path string) bool {
	on, err := fsx.SwitchOn(path)
	if err != nil {
		var nr *fsx.NotRegularError
		kind := ""
		if errors.As(err, &nr) {
			kind = nr.Kind
		}
		if s.guard.tellOnce("switch:" + path + ":" + kind) {
			s.Log.Warn("switch file ignored: not a regular file", "path", path, "kind", kind)
		}
	}
	return on
}

// relToRoot is path relative to the spool root, with slashes, for an
// openat walk from the root.
func (s *Store) relToRoot(path string) (string, error) {
	rel, err := filepath.Rel(s.Layout.Root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the spool %s", path, s.Layout.Root)
	}
	return rel, nil
}

// foldersSafe checks, just before intake uses them, the drop's folder and
// the folders a drop can move to (both lanes' pending/ and failed/), and
// any fault the last CheckLayout found. On a fault it runs CheckLayout,
// which logs it once, and reports false: intake then leaves the drop for
// the next rescan.
func (s *Store) foldersSafe(dir string) bool {
	if s.LayoutFault() != nil {
		return false
	}
	dirs := []string{dir}
	for _, k := range taskfile.Kinds {
		dirs = append(dirs, filepath.Join(s.Layout.Root, string(k)), s.Layout.Lane(k, taskfile.DirPending), s.Layout.Lane(k, taskfile.DirFailed))
	}
	for _, d := range dirs {
		if err := fsx.CheckFolder(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.CheckLayout()
			return false
		}
	}
	return true
}
