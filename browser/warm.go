package browser

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/spoolgate/spoolgate/lanes/attempt"
)

// A warm session keeps its browser between tasks (web.warm): the field
// report's demo paid 2.4 s of launch and close on every web task. The
// browser stays the session holder's: the executor runs one attempt at a
// time (its mutex), the lane calls it only while it holds the session's
// lock and lease, and the lane's Release closes it when the session gives
// the account up or stops. Every task still opens the site's page afresh
// (a new chat) and checks it exactly as on a fresh browser: signed in,
// the input there, the input cleared before typing. Anything unclear (a
// failed attempt of any class, a cancel, a browser that died or does not
// answer, too many tasks, too long idle, too much memory) ends it; the
// next task starts a new one after the self-check, as always.

// warm is the browser kept for the next task.
type warm struct {
	b     *Browser
	timer *time.Timer // closes it after web.warm.idle without a task
	// rss is the resident memory of its processes, measured once it was
	// kept (off the next task's path: listing the process tree reads all
	// of /proc); rssDone closes when it is there.
	rss     uint64
	rssErr  error
	rssDone chan struct{}
}

// warmOn reports whether sessions keep their browser between tasks.
func (e *Executor) warmOn() bool { return !e.cfg.Web.Warm.Off }

// browserFor returns the browser of an attempt: the warm one when it may
// run another task, else a new one, launched after the self-check and
// the single-instance check. Called with e.mu held.
func (e *Executor) browserFor(ctx context.Context, job *attempt.Job, profile string, log *slog.Logger) (*Browser, error) {
	if b := e.takeWarm(ctx, log); b != nil {
		job.SetStage("reusing the warm browser")
		return b, nil
	}
	job.SetStage("self-check")
	if err := SelfCheck(profile, log); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, stopped(ctx, "self-check")
	}
	job.SetStage("single-instance check")
	if err := checkSingleInstance(profile, log); err != nil {
		return nil, err
	}
	job.SetStage("launching browser")
	b, err := Launch(ctx, e.cfg, profile, e.cfg.Web.IsHeadless(), log)
	if err != nil {
		if ctx.Err() != nil {
			return nil, stopped(ctx, "launching browser")
		}
		return nil, err
	}
	b.grace = e.closeGrace
	e.launches.Add(1)
	return b, nil
}

// takeWarm hands over the warm browser, or nil when there is none or it
// must be started again (then it is closed here, before any launch).
func (e *Executor) takeWarm(ctx context.Context, log *slog.Logger) *Browser {
	w := e.warm
	if w == nil {
		return nil
	}
	e.warm = nil
	w.timer.Stop()
	why := e.recycleReason(ctx, w)
	if why == "" {
		log.Info("browser: warm; reused", "pid", w.b.PID(), "task", w.b.tasks+1)
		w.b.log = log // its close, if this attempt ends it, is this task's
		return w.b
	}
	log.Info("browser: recycling the warm browser", "pid", w.b.PID(), "why", why, "tasks", w.b.tasks)
	w.b.Close()
	return nil
}

// recycleReason says why warm browser w may not run the next task, or "".
func (e *Executor) recycleReason(ctx context.Context, w *warm) string {
	wc, b := e.cfg.Web.Warm, w.b
	if b.Context().Err() != nil || b.exited() {
		return "it exited"
	}
	if wc.MaxTasks > 0 && b.tasks >= wc.MaxTasks {
		return fmt.Sprintf("it ran web.warm.maxTasks (%d) tasks", wc.MaxTasks)
	}
	if idle := wc.Idle.D(); idle > 0 && time.Since(b.used) >= idle {
		return fmt.Sprintf("it was idle for web.warm.idle (%s)", idle)
	}
	select {
	case <-w.rssDone:
		if w.rssErr == nil && wc.MaxMemoryMB > 0 && w.rss > uint64(wc.MaxMemoryMB)<<20 {
			return fmt.Sprintf("its processes hold %d MB, above web.warm.maxMemoryMB (%d)", w.rss>>20, wc.MaxMemoryMB)
		}
	default: // not measured yet (a task right after the last): the next one checks
	}
	timeout := e.ProbeTimeout
	if timeout <= 0 {
		timeout = defaultProbeTimeout
	}
	if err := b.Probe(ctx, timeout); err != nil {
		return "it did not answer: " + err.Error()
	}
	return ""
}

// keepWarm keeps b, whose attempt succeeded, for the next task, and arms
// its idle close. Called with e.mu held.
func (e *Executor) keepWarm(b *Browser) {
	b.tasks++
	b.used = time.Now()
	b.log.Info("browser: kept warm for the session's next task", "pid", b.pid, "tasks", b.tasks)
	b.log = e.log // no longer the finished task's: its log file has ended
	w := &warm{b: b, rssDone: make(chan struct{})}
	go func() {
		defer close(w.rssDone)
		w.rss, w.rssErr = b.rss()
	}()
	idle := e.cfg.Web.Warm.Idle.D()
	if idle <= 0 {
		idle = time.Duration(1<<63 - 1)
	}
	w.timer = time.AfterFunc(idle, func() { e.idleClose(w) })
	e.warm = w
}

// idleClose closes w if it is still the warm browser when its idle time
// is up; an attempt that runs meanwhile took it (or will recycle it).
func (e *Executor) idleClose(w *warm) {
	if !e.mu.TryLock() {
		return
	}
	defer e.mu.Unlock()
	if e.warm != w {
		return
	}
	e.warm = nil
	e.log.Info("browser: closing the warm browser", "pid", w.b.PID(), "why", "web.warm.idle passed", "tasks", w.b.tasks)
	e.closeLater(w.b)
}

// closeLater closes b in the background after any close still running;
// the next attempt waits for it (e.closing) before its self-check, so one
// profile never has two browsers. Called with e.mu held.
func (e *Executor) closeLater(b *Browser) {
	prev := e.closing
	done := make(chan struct{})
	closes.Add(1)
	go func() {
		defer closes.Done()
		defer close(done)
		if prev != nil {
			<-prev
		}
		b.Close()
	}()
	e.closing = done
}

// Release closes the session's warm browser, if any (attempt.Releaser):
// the lane calls it when the session gives up its account for a reason
// (switched off, held, signing in, its lease taken by another host; not
// for want of work or for its pace: then web.warm.idle closes it) and,
// with wait, when it stops; then
// it returns only once the browser, and any close still running, is gone.
// Without wait it never blocks: an attempt that runs keeps its browser.
func (e *Executor) Release(wait bool) {
	if wait {
		e.mu.Lock()
	} else if !e.mu.TryLock() {
		return
	}
	defer e.mu.Unlock()
	if w := e.warm; w != nil {
		e.warm = nil
		w.timer.Stop()
		if wait {
			<-w.rssDone // no goroutine of ours outlives a blocking Release
		}
		e.log.Info("browser: closing the warm browser", "pid", w.b.PID(), "why", "the session gave up its account", "tasks", w.b.tasks)
		e.closeLater(w.b)
	}
	if wait && e.closing != nil {
		<-e.closing
		e.closing = nil
	}
}

// Launches is how many browsers this executor started (tests, the bench).
func (e *Executor) Launches() int64 { return e.launches.Load() }

// rss is the resident memory of the browser's main process and all its
// descendants (renderers, GPU, network service), summed.
func (b *Browser) rss() (uint64, error) {
	root, err := process.NewProcess(int32(b.pid))
	if err != nil {
		return 0, err
	}
	var sum uint64
	for _, p := range tree(root) {
		if mi, err := p.MemoryInfo(); err == nil && mi != nil {
			sum += mi.RSS
		}
	}
	return sum, nil
}
