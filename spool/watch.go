package spool

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

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
// A file is complete when it arrived by rename (an fsnotify create with no
// write after it), or when its size and mtime have held still for Settle
// (by our own observation, or by an mtime already Settle in the past, which
// is what a poll of a share sees).
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

	startstop.Base
}

type obs struct {
	dir        int
	name       string
	size       int64
	mtime      time.Time
	lastChange time.Time
	createOnly bool // seen through a create event, no write yet
	sawWrite   bool
	seen       bool // stat'ed at least once
	due        time.Time
}

// debounce is how long a create event waits for a following write event
// before the file counts as renamed into place.
const debounce = 5 * time.Millisecond

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

	doRescan := func() {
		for i, d := range w.Dirs {
			ents, err := ReadDir(d.Path)
			if err != nil {
				w.Log.Warn("rescan failed", "dir", d.Path, "err", err)
				continue
			}
			for _, e := range ents {
				if !w.accept(d, e.Name()) {
					continue
				}
				p := filepath.Join(d.Path, e.Name())
				if _, ok := cands[p]; !ok {
					cands[p] = &obs{dir: i, name: e.Name()}
				}
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
				o = &obs{dir: i, name: name}
				cands[ev.Name] = o
			}
			now := time.Now()
			switch {
			case ev.Has(fsnotify.Write):
				o.sawWrite, o.createOnly = true, false
				o.lastChange = now
				o.due = now.Add(w.Settle)
			case ev.Has(fsnotify.Create):
				if !o.sawWrite {
					o.createOnly = true
				}
				o.due = now.Add(debounce)
			default:
				o.due = now
			}
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

// process checks every candidate that is due, hands complete files to
// Handle, and returns when the next candidate falls due.
func (w *Watcher) process(cands map[string]*obs, now time.Time) time.Time {
	var next time.Time
	for p, o := range cands {
		if o.due.After(now) {
			if next.IsZero() || o.due.Before(next) {
				next = o.due
			}
			continue
		}
		d := w.Dirs[o.dir]
		fi, err := os.Lstat(p)
		if err != nil {
			delete(cands, p)
			continue
		}
		ready := false
		switch {
		case d.CancelRequests || d.PriorityRequests || !fi.Mode().IsRegular():
			ready = true // nothing to settle: taken or rejected as it is
		case !o.seen || fi.Size() != o.size || !fi.ModTime().Equal(o.mtime):
			if o.seen {
				o.createOnly = false
			}
			if !o.seen && !o.sawWrite && (o.createOnly && fi.Size() > 0 ||
				!fi.ModTime().After(now.Add(-w.Settle))) {
				ready = true // renamed into place, or already still for settle
			}
			o.seen, o.size, o.mtime, o.lastChange = true, fi.Size(), fi.ModTime(), now
		default:
			// Unchanged since we last looked. A create event with no write
			// after it (a rename into place that a rescan happened to list
			// first) is complete too.
			ready = now.Sub(o.lastChange) >= w.Settle ||
				!o.sawWrite && (o.createOnly && fi.Size() > 0 || !fi.ModTime().After(now.Add(-w.Settle)))
		}
		if ready {
			delete(cands, p)
			w.Handle(d, o.name)
			continue
		}
		o.due = o.lastChange.Add(w.Settle)
		if m := fi.ModTime(); !o.sawWrite && !m.After(now) && m.Add(w.Settle).Before(o.due) {
			// A poll sees a drop only at a rescan; its mtime says how long it
			// has already held still, so look again when settle is up by it.
			o.due = m.Add(w.Settle)
		}
		if o.due.Before(now) {
			o.due = now.Add(w.Settle)
		}
		if next.IsZero() || o.due.Before(next) {
			next = o.due
		}
	}
	return next
}
