package lanes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/logonce"
	"github.com/spoolgate/spoolgate/internal/startstop"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Daemon is `spoolgate run`: intake, the two lanes, cancel requests. It
// owns every goroutine it starts. Its lifecycle is startstop's: Started is
// closed once recovery is done and the lanes and the watcher have started.
type Daemon struct {
	Store     *spool.Store
	Executors map[taskfile.Kind]attempt.Executor // a lane without an executor does not run
	// SessionExecutor builds each web session's executor (its browser on
	// its profile); without it every session uses Executors[web].
	SessionExecutor SessionExecutor
	// PaceScale multiplies the windows of the accounts' paces (Config.PaceScale).
	PaceScale float64
	Log       *slog.Logger
	Hooks     Hooks

	cfg     *config.Config
	owner   string
	lanes   map[taskfile.Kind]*Lane
	watcher *spool.Watcher
	fails   *logonce.Limiter // intake failures that repeat at every rescan
	once    sync.Once
	stopped func() // ends the startstop run; set by Start

	startstop.Base
}

// Start creates the spool's folders, repairs what a crash left, rebuilds the
// pending indexes from disk, and starts the lanes and the watcher.
func (d *Daemon) Start(ctx context.Context) error {
	ctx, ok, started, stopped := d.StartInit(ctx)
	if !ok {
		return nil
	}
	// Start-up reads every pending file once (recovery), builds the indexes
	// from what it found, and lists pending/ again (the watcher's first
	// rescan merges what it finds): a tighter GC target until all that is
	// done keeps the peak resident memory near the live index. With 100,000
	// pending files the default target peaked at 94 MB; restored before the
	// indexes were built, their maps and the first rescan's listings took
	// the heap from 32 to 58 MB (make bench's start-up RSS).
	defer tightGC()()
	err := d.start(ctx)
	if err != nil {
		d.Store.DropSpares()
		stopped()
		return err
	}
	d.stopped = stopped
	for _, l := range d.lanes {
		<-l.Started()
	}
	<-d.watcher.Started()
	d.Log.Info("started", "spool", d.Store.Layout.Root, "owner", d.owner, "poll", d.cfg.Poll,
		"apiConcurrency", d.cfg.API.Concurrency, "webSessions", config.Concurrency(d.cfg, taskfile.KindWeb))
	started()
	return nil
}

func (d *Daemon) start(ctx context.Context) error {
	d.cfg = d.Store.Cfg
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	d.owner = spool.OwnerOf(d.cfg.Host)
	d.fails = logonce.New(d.Log.With("component", "intake"), 0)
	if err := d.Store.Layout.Create(); err != nil {
		return err
	}
	// Rewrites recycle the files they swap out, for the daemon's life
	// (spool.Store.KeepSpares): a task then frees no inode.
	d.Store.KeepSpares()
	if err := d.Store.CheckLayout(); err != nil {
		return err
	}
	if err := d.probeShare(); err != nil {
		return err
	}
	entries, err := spool.Recover(d.Store, func(t *taskfile.Task) Entry { return EntryOf(d.cfg, t) })
	if err != nil {
		return fmt.Errorf("recover: %w", err)
	}
	d.lanes = map[taskfile.Kind]*Lane{}
	for _, k := range taskfile.Kinds {
		ex := d.Executors[k]
		if ex == nil {
			continue
		}
		var adm Admission
		if k == taskfile.KindAPI {
			if g := NewModelGate(d.cfg); g != nil {
				adm = g
			}
		}
		l, err := NewLane(Config{Kind: k, Executor: ex, Store: d.Store, Owner: d.owner,
			Log: laneLogger(d.Log, k), Hooks: d.Hooks, Index: NewIndex(entries[k]), Admission: adm, SessionExecutor: d.SessionExecutor, PaceScale: d.PaceScale})
		if err != nil {
			return err
		}
		d.lanes[k] = l
	}
	d.Store.SetOutputOwner(d.outputOwner)
	for _, l := range d.lanes {
		_ = l.Start(ctx) // a lane's Start cannot fail
	}
	dirs := []spool.WatchDir{{Path: d.Store.Layout.Incoming()}}
	for _, k := range taskfile.Kinds {
		dirs = append(dirs,
			spool.WatchDir{Path: d.Store.Layout.Lane(k, taskfile.DirIncoming), Lane: k},
			spool.WatchDir{Path: d.Store.Layout.Lane(k, taskfile.DirCancel), Lane: k, CancelRequests: true, Accept: taskfile.ValidTaskID},
			spool.WatchDir{Path: d.Store.Layout.Lane(k, taskfile.DirPriority), Lane: k, PriorityRequests: true, Accept: taskfile.ValidTaskID})
	}
	d.watcher = &spool.Watcher{
		Dirs: dirs, Settle: d.cfg.Settle.D(), Rescan: d.cfg.Rescan.D(), Poll: d.cfg.Poll,
		Log: d.Log.With("component", "intake"), Handle: d.handle,
		AfterRescan: func() { d.Store.Maintain(); d.Store.Rejudge(); d.mergePending() },
	}
	if err := d.watcher.Start(ctx); err != nil {
		for _, l := range d.lanes {
			l.Stop()
		}
		return err
	}
	return nil
}

// probeShare checks what the spool's file system offers before a single
// move (see spool.ProbeDir): one line per file system in the log, the
// first kept for `status --json`, and a refusal to start where no claim
// protocol keeps a task from running twice.
func (d *Daemon) probeShare() error {
	probes, refusal := d.Store.ProbeSpool()
	for _, p := range probes {
		if p.Claim == spool.ClaimNone {
			d.Log.Error(p.Line)
		} else {
			d.Log.Info(p.Line)
		}
	}
	if len(probes) > 0 {
		if err := d.Store.SaveProbe(probes[0]); err != nil {
			d.Log.Warn("share probe: not saved for status", "err", err)
		}
	}
	return refusal
}

// laneLogger gives each lane its own prefix, so the two lanes' lines read
// apart at a glance: "[web]" and "[api]".
func laneLogger(log *slog.Logger, k taskfile.Kind) *slog.Logger {
	return slog.New(prefixHandler{h: log.Handler(), prefix: "[" + string(k) + "] "})
}

// Lane returns the lane of kind k, or nil.
func (d *Daemon) Lane(k taskfile.Kind) *Lane { return d.lanes[k] }

// Info returns the lanes' live views.
func (d *Daemon) Info() []taskfile.LaneInfo {
	var out []taskfile.LaneInfo
	for _, k := range taskfile.Kinds {
		if l := d.lanes[k]; l != nil {
			out = append(out, l.Info())
		}
	}
	return out
}

// Shutdown stops in two stages: stop taking drops and claiming, wait for
// running attempts until ctx ends (the grace period), then cancel what
// still runs back to pending without spending its attempt. Safe to call
// twice; a second call with an ended ctx cuts the grace short.
func (d *Daemon) Shutdown(ctx context.Context) {
	if d.watcher != nil {
		d.watcher.Stop()
	}
	for _, l := range d.lanes {
		l.Drain()
	}
	all := true
	for _, l := range d.lanes {
		if !l.WaitRunning(ctx) {
			all = false
		}
	}
	if !all {
		d.Log.Warn("grace period over: canceling running tasks back to pending")
	}
	d.once.Do(func() {
		for _, l := range d.lanes {
			l.Stop()
		}
		d.Store.DropSpares()
		if d.stopped != nil {
			d.Log.Info("stopped")
			d.stopped()
		}
	})
}

// Stop is Shutdown with the configured shutdownGrace. Safe to call twice,
// and before Start.
func (d *Daemon) Stop() {
	if !d.Running() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.ShutdownGrace.D())
	defer cancel()
	d.Shutdown(ctx)
}

func (d *Daemon) handle(w spool.WatchDir, name string) {
	if (w.CancelRequests || w.PriorityRequests) && !d.plainRequest(w, name) {
		return
	}
	if w.CancelRequests {
		d.cancelRequest(w.Lane, name)
		return
	}
	if w.PriorityRequests {
		d.priorityRequest(w.Lane, name)
		return
	}
	file := filepath.Join(w.Path, name)
	res, err := d.Store.Intake(w.Path, name, w.Lane)
	if err != nil {
		// The drop stays where it is; the next rescan tries again. A
		// failure that repeats at every rescan is logged once, then
		// counted.
		d.fails.Fail("intake:"+file, "intake failed", err, "file", file)
		return
	}
	d.fails.OK("intake:" + file)
	switch res.Outcome {
	case spool.Accepted:
		l := d.lanes[res.Lane]
		laneLogger(d.Log, res.Lane).Info("accepted", "taskId", res.Task.TaskID, "file", name)
		if l != nil {
			l.Requeue(res.Task)
		}
		if d.Hooks.OnAccept != nil {
			d.Hooks.OnAccept(res.Lane, res.Task)
		}
	case spool.Rejected:
		laneLogger(d.Log, res.Lane).Warn("rejected drop", "file", name, "moved", res.Path, "reason", res.Reason)
		if d.Hooks.OnReject != nil {
			d.Hooks.OnReject(res.Lane, res.Reason)
		}
	}
}

// mergePending adds tasks that reached pending/ without this daemon's
// intake (another daemon on a share, recovery of another host) to the
// index: see spool.Store.MergePending.
func (d *Daemon) mergePending() {
	now := time.Now()
	for k, l := range d.lanes {
		for _, t := range d.Store.MergePending(k, now, l.c.Index.Has) {
			l.Requeue(t)
		}
	}
}

// cancelRequest handles <lane>/cancel/ID: pending → canceled at once;
// running here → the attempt's context is canceled and the runner records
// the real outcome; running elsewhere → left for its owner; finished or
// unknown → nothing to do. The request file is consumed.
func (d *Daemon) cancelRequest(k taskfile.Kind, id string) {
	req := d.Store.Layout.CancelPath(k, id)
	log := laneLogger(d.Log, k).With("taskId", id)
	consume := func() {
		if err := os.Remove(req); err != nil && !errors.Is(err, os.ErrNotExist) {
			d.Store.Limiter().Fail("cancel consume:"+req, "consume cancel request", err, "lane", k, "taskId", id)
		}
		if d.Hooks.OnCancelRequest != nil {
			d.Hooks.OnCancelRequest(k, id)
		}
	}
	l := d.lanes[k]
	ours := func() bool {
		if l == nil || !l.cancelRunner(id) {
			return false
		}
		TaskLogger(laneLogger(d.Log, k), d.Store, k, id).Info("cancel requested: stopping at the next checkpoint")
		consume()
		return true
	}
	for {
		if ours() {
			return
		}
		where := d.Store.Layout.Locate(k, id)
		switch where {
		case taskfile.DirPending:
			t, err := d.Store.CancelPending(k, id, time.Now())
			if errors.Is(err, os.ErrNotExist) {
				continue // claimed just now: look again
			}
			if err != nil {
				// Left for the next rescan: the request stays, and a
				// claim this cut short goes back to pending/.
				d.Store.Limiter().Fail("cancel pending:"+req, "cancel pending", err, "lane", k, "taskId", id)
				return
			}
			if l != nil {
				l.c.Index.Remove(id)
			}
			TaskLogger(laneLogger(d.Log, k), d.Store, k, id).Info("canceled while pending")
			consume()
			d.Hooks.final(k, t)
			return
		case taskfile.DirRunning:
			// Our claims register their runner before they move the file,
			// so one more look settles whether it is ours.
			ours()
			return // if not ours, another daemon runs it: its own watcher consumes the request
		case "":
			log.Info("cancel request for no such task: consumed")
			consume()
			return
		default:
			log.Info("cancel request for a finished task: nothing to do", "state", taskfile.FolderState[where])
			consume()
			return
		}
	}
}

// cancelRunner cancels id's attempt if this lane runs it.
func (l *Lane) cancelRunner(id string) bool {
	l.mu.Lock()
	r := l.running[id]
	l.mu.Unlock()
	if r == nil {
		return false
	}
	r.cancel(attempt.ErrCanceled)
	return true
}
