package spool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/logonce"
	"github.com/spoolgate/spoolgate/internal/startstop"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// WatchDir is one folder a Watcher reports files from.
type WatchDir struct {
	Path string
	Lane taskfile.Kind // "" for the lane-less drop box
	// CancelRequests marks a lane's cancel/ folder: a request file is
	// reported at first sight, since its content does not matter and so
	// there is nothing to settle.
	CancelRequests bool
	// PriorityRequests marks a lane's priority/ folder (reindex requests
	// of `spoolgate priority`): reported at first sight, like cancel/.
	PriorityRequests bool
	// Accept filters names; nil means IsTaskFileName.
	Accept func(name string) bool
}

// Watcher reports files in a set of folders once they are complete. fsnotify
// is only a speed-up: every Rescan period (and at once after an event
// overflow or error) the folders are listed in full, and with Poll there is
// no fsnotify at all, for network shares where writes from other hosts raise
// no events.
//
// A file is complete when it certainly arrived by rename (an inotify
// MOVED_TO paired with the MOVED_FROM of a name in a watched folder:
// the tmp+rename protocol) and is neither empty nor NUL-filled, or when its
// stamp (size, mtime, ctime, inode) has held still, by our own looks, for
// Settle. Any other event (a create, an attribute change, an open, a
// write) is a writer at work and starts the settle again; a first sight at
// a rescan, and every look in Poll mode, judge by the stamp alone. A file's
// own mtime is never trusted to say it is old: copy engines set it.
type Watcher struct {
	Dirs   []WatchDir
	Settle time.Duration
	Rescan time.Duration
	Poll   bool
	Log    *slog.Logger
	// Handle is called serially from the watcher's goroutine for each
	// complete file. It must move or remove the file (or leave it to be
	// reported again at the next rescan).
	Handle func(d WatchDir, name string)
	// AfterRescan, if set, runs after each full rescan, on the watcher's
	// goroutine.
	AfterRescan func()

	fails *logonce.Limiter // a folder that fails at every rescan: logged once
	startstop.Base
}

type obs struct {
	seq     uint64 // order of first sight: files are handed over in it
	dir     int
	name    string
	st      fsx.Stamp // as last looked at
	since   time.Time // when st was first seen (or a change event came)
	seen    bool      // looked at at least once
	renamed bool      // a certain rename into place, nothing after it
	due     time.Time
}

// Start begins watching. Started is closed once the first full rescan
// has listed every folder (and fsnotify, unless Poll, watches them).
func (w *Watcher) Start(ctx context.Context) error {
	ctx, ok, started, stopped := w.StartInit(ctx)
	if !ok {
		return nil
	}
	fw, err := w.open()
	if err != nil {
		stopped()
		return err
	}
	go func() {
		defer stopped()
		w.loop(ctx, fw, started)
	}()
	return nil
}

// open sets the defaults and, unless Poll, watches every folder.
func (w *Watcher) open() (*fsnotify.Watcher, error) {
	if w.Log == nil {
		w.Log = slog.New(slog.DiscardHandler)
	}
	if w.Rescan <= 0 {
		w.Rescan = 5 * time.Second
	}
	w.fails = logonce.New(w.Log, 0)
	var fw *fsnotify.Watcher
	if !w.Poll {
		var err error
		fw, err = fsnotify.NewWatcher()
		if err != nil {
			w.Log.Warn("fsnotify unavailable, polling only", "err", err)
		} else {
			for _, d := range w.Dirs {
				if err := fw.Add(d.Path); err != nil {
					fw.Close()
					return nil, &TaskPathError{Path: d.Path, Err: err}
				}
			}
		}
	}
	return fw, nil
}

func (w *Watcher) loop(ctx context.Context, fw *fsnotify.Watcher, started func()) {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if fw != nil {
		defer fw.Close()
		events, errs = fw.Events, fw.Errors
	}
	byPath := map[string]int{}
	for i, d := range w.Dirs {
		byPath[filepath.Clean(d.Path)] = i
	}
	cands := map[string]*obs{}
	rescan := time.NewTicker(w.Rescan)
	defer rescan.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()

	var seq uint64
	doRescan := func() {
		for i, d := range w.Dirs {
			ents, err := fsx.ReadDir(d.Path)
			if err != nil {
				w.fails.Fail("rescan:"+d.Path, "rescan failed", err, "dir", d.Path)
				continue
			}
			w.fails.OK("rescan:" + d.Path)
			// Files first seen by a listing are taken oldest first (by
			// mtime, then name): the listing does not say in which order
			// they arrived, their mtimes come closest.
			type found struct {
				name  string
				mtime time.Time
			}
			var fresh []found
			for _, e := range ents {
				if !w.accept(d, e.Name()) {
					continue
				}
				if _, ok := cands[filepath.Join(d.Path, e.Name())]; !ok {
					f := found{name: e.Name()}
					if fi, err := e.Info(); err == nil {
						f.mtime = fi.ModTime()
					}
					fresh = append(fresh, f)
				}
			}
			slices.SortStableFunc(fresh, func(a, b found) int { return a.mtime.Compare(b.mtime) })
			for _, f := range fresh {
				seq++
				cands[filepath.Join(d.Path, f.name)] = &obs{seq: seq, dir: i, name: f.name}
			}
		}
		if w.AfterRescan != nil {
			w.AfterRescan()
		}
	}
	doRescan()
	started()
	for {
		now := time.Now()
		next := w.process(cands, now)
		if next.IsZero() {
			next = now.Add(time.Hour)
		}
		timer.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			return
		case <-rescan.C:
			doRescan()
		case <-timer.C:
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			i, ok := byPath[filepath.Dir(ev.Name)]
			if !ok {
				continue
			}
			d := w.Dirs[i]
			name := filepath.Base(ev.Name)
			if !w.accept(d, name) {
				continue
			}
			o := cands[ev.Name]
			if o == nil {
				seq++
				o = &obs{seq: seq, dir: i, name: name}
				cands[ev.Name] = o
			}
			now := time.Now()
			switch {
			case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
				o.due = now // gone or moved away: the next look forgets it
			case ev.Has(fsnotify.Create) && renamedInto(ev):
				o.renamed, o.due = true, now
			default:
				// A create, write, attribute change or open: a writer at
				// work. Settle starts again from now.
				o.renamed, o.since, o.due = false, now, now.Add(w.Settle)
			}
			o.seen = o.seen && !o.renamed
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.Log.Warn("fsnotify overflow: rescanning")
			} else {
				w.Log.Warn("fsnotify error: rescanning", "err", err)
			}
			doRescan()
		}
	}
}

func (w *Watcher) accept(d WatchDir, name string) bool {
	if d.Accept != nil {
		return d.Accept(name)
	}
	return taskfile.IsTaskFileName(name)
}

// renamedInto reports whether a create event is a rename into place whose
// source was a name in a watched folder (inotify's MOVED_TO with the
// cookie of a MOVED_FROM we saw). fsnotify keeps that source name to
// itself but for its String form, which it then ends with " ← OLD".
// A create that is not certainly a rename (IN_CREATE, or a move from an
// unwatched folder) settles like a file written in place.
func renamedInto(ev fsnotify.Event) bool {
	return strings.HasPrefix(ev.String(), fmt.Sprintf("%-13s %q ← ", ev.Op.String(), ev.Name))
}

// process checks every candidate that is due, hands complete files to
// Handle in the order they were first seen (the order they were dropped:
// intake stamps submittedAt, which orders the queue, so a burst of drops
// runs in drop order, not in a map's), and returns when the next
// candidate falls due.
func (w *Watcher) process(cands map[string]*obs, now time.Time) time.Time {
	var next time.Time
	var due []string
	for p, o := range cands {
		if o.due.After(now) {
			if next.IsZero() || o.due.Before(next) {
				next = o.due
			}
			continue
		}
		due = append(due, p)
	}
	slices.SortFunc(due, func(a, b string) int { return cmp.Compare(cands[a].seq, cands[b].seq) })
	for _, p := range due {
		o := cands[p]
		d := w.Dirs[o.dir]
		fi, err := os.Lstat(p)
		if err != nil {
			delete(cands, p)
			continue
		}
		st := fsx.StampOf(fi)
		ready := false
		switch {
		case d.CancelRequests || d.PriorityRequests || !fi.Mode().IsRegular():
			ready = true // nothing to settle: taken or rejected as it is
		case o.renamed:
			// The tmp+rename protocol: the writer was done before the
			// rename. An empty or NUL-filled file is not yet a drop
			// whatever its name's history: it settles.
			o.renamed = false
			ready = !fsx.Unfinished(p)
			o.seen, o.st, o.since = true, st, now
		case !o.seen || st != o.st:
			if o.since.IsZero() || st != o.st {
				o.since = now
			}
			o.seen, o.st = true, st
		default:
			ready = now.Sub(o.since) >= w.Settle
		}
		if ready {
			delete(cands, p)
			w.Handle(d, o.name)
			continue
		}
		o.due = o.since.Add(w.Settle)
		if !o.due.After(now) {
			o.due = now.Add(w.Settle)
		}
		if next.IsZero() || o.due.Before(next) {
			next = o.due
		}
	}
	return next
}
