// This file holds the Lane itself: its Config and defaults, its life
// (Start, Drain, Stop), its live view, and the scheduler loop and round.

// Package lanes schedules tasks: one lane per kind of model, each with its
// own scheduler loop and worker pool, so that a six-minute web task never
// delays a ten-second API task.
package lanes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/startstop"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Lane is one scheduler loop and one worker pool for one kind of model.
// Lanes never share workers. It keeps only what it owns: its config, its
// sessions, its runners and its loop's state; the spool config, the
// timings and the concurrency are read from the Store's config, never
// copied.
type Lane struct {
	c        Config     // checked, defaults filled (NewLane)
	sessions []*session // web lane only: one per account, each its own guarantee (see spool.RunnerLock)
	wake     chan struct{}

	mu       sync.Mutex
	running  map[string]*runner
	finished ended            // ids whose runner ended lately: never reclaimed by this lane (see holds)
	deferred map[string]Entry // claims put off while a runner of ours held the id: requeued when it lets go
	draining bool             // stop claiming (shutdown stage one)

	// The loop's own, read and written by no other goroutine, so under
	// no lock: holdOnce runs inside the index's predicates (Index.Next
	// holds the index's lock), and taking mu there deadlocked against
	// Info, which holds mu while it reads the index (CI, stop 46).
	lastReclaim time.Time
	held        string // last logged hold reason, to log once

	startstop.Base
	wg sync.WaitGroup // runners
}

// Config configures a Lane. NewLane checks it and fills in the defaults
// of the optional fields, in river's manner: the zero value of an
// optional field means its default.
type Config struct {
	// Kind is the lane's kind of model. Required.
	Kind taskfile.Kind
	// Executor runs the lane's attempts (the web lane's sessions, unless
	// SessionExecutor builds their own). Required.
	Executor attempt.Executor
	// Store is the spool; its Cfg is the lane's config. Required.
	Store *spool.Store
	// Owner names this daemon in the task files (host:pid). Default:
	// spool.OwnerOf(Store.Cfg.Host).
	Owner string
	// Log is the lane's logger; it gets the field lane=Kind. Default:
	// discard.
	Log   *slog.Logger
	Hooks Hooks
	// Index is the lane's pending index. Default: an empty one.
	Index *Index
	// Admission, if set, decides which pending tasks may start now
	// (per-model quotas); the lane takes the first one it admits.
	Admission Admission
	// SessionExecutor, for the web lane, builds each session's executor;
	// without it every session uses Executor.
	SessionExecutor SessionExecutor
	// PaceScale multiplies the windows of the accounts' paces
	// (config.Pace.Scaled): a test's time scale; 0 means 1.
	PaceScale float64
}

// withDefaults checks c and returns it with its defaults filled in.
func (c Config) withDefaults() (Config, error) {
	switch {
	case !c.Kind.Valid():
		return c, fmt.Errorf("lane config: kind %q is not web or api", c.Kind)
	case c.Store == nil || c.Store.Cfg == nil:
		return c, errors.New("lane config: no store")
	case c.Executor == nil && c.SessionExecutor == nil:
		return c, fmt.Errorf("lane config: %s lane without an executor", c.Kind)
	}
	if c.Owner == "" {
		c.Owner = spool.OwnerOf(c.Store.Cfg.Host)
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	c.Log = c.Log.With("lane", string(c.Kind))
	if c.Index == nil {
		c.Index = NewIndex(nil)
	}
	return c, nil
}

// NewLane builds a lane; Start runs it.
func NewLane(c Config) (*Lane, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	l := &Lane{c: c, wake: make(chan struct{}, 1), running: map[string]*runner{}, deferred: map[string]Entry{}}
	if c.Kind == taskfile.KindWeb {
		l.sessions = newSessions(c.Store.Cfg, c.Executor, c.SessionExecutor)
	}
	return l, nil
}

// cfg is the spool's config (the Store's).
func (l *Lane) cfg() *config.Config { return l.c.Store.Cfg }

// timing is the timings derived from the config.
func (l *Lane) timing() config.Timing { return l.c.Store.Cfg.Timing() }

// concurrency is how many tasks the lane runs at once.
func (l *Lane) concurrency() int { return config.Concurrency(l.c.Store.Cfg, l.c.Kind) }

// standby reports whether the web lane waits for other processes' locks:
// none of its sessions holds its lock. holder names the first session's
// holder then.
func (l *Lane) standby() (standby bool, holder string) {
	if len(l.sessions) == 0 {
		return false, ""
	}
	for _, s := range l.sessions {
		s.mu.Lock()
		sb := s.standby
		s.mu.Unlock()
		if !sb {
			return false, ""
		}
	}
	s := l.sessions[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	return true, s.holder
}

// Index is the lane's pending index.
func (l *Lane) Index() *Index { return l.c.Index }

// Kind is the lane's kind.
func (l *Lane) Kind() taskfile.Kind { return l.c.Kind }

// Start runs the scheduler loop until Stop.
// Start runs the scheduler loop until Stop; Started is closed once the
// loop has done its first round.
func (l *Lane) Start(ctx context.Context) error {
	ctx, ok, started, stopped := l.StartInit(ctx)
	if !ok {
		return nil
	}
	go func() {
		defer stopped()
		l.loop(ctx, started)
	}()
	return nil
}

// Wake asks for a scheduling round now.
func (l *Lane) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Drain stops claiming new tasks; running ones go on.
func (l *Lane) Drain() {
	l.mu.Lock()
	l.draining = true
	l.mu.Unlock()
}

// CancelRunning cancels every running attempt with cause.
func (l *Lane) CancelRunning(cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.running {
		r.cancel(cause)
	}
}

// WaitRunning waits until no attempt runs or ctx ends; it reports whether
// all ended.
func (l *Lane) WaitRunning(ctx context.Context) bool {
	ch := make(chan struct{})
	go func() { l.wg.Wait(); close(ch) }()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// Stop ends the loop after canceling whatever still runs (back to pending,
// no attempt spent) and waits for every goroutine. Safe to call twice.
func (l *Lane) Stop() {
	l.Drain()
	l.CancelRunning(attempt.ErrShutdown)
	l.wg.Wait()
	l.Base.Stop()
	l.releaseSessions()
}

// Info is the lane's live view.
func (l *Lane) Info() taskfile.LaneInfo {
	var sessions []taskfile.SessionInfo
	if l.sessions != nil {
		sessions = l.sessionInfos(time.Now())
	}
	standby, holder := l.standby()
	// The index and the pause file outside mu: mu is never held while
	// another lock or the disk is waited for.
	li := taskfile.LaneInfo{Kind: l.c.Kind, Concurrency: l.concurrency(), Pending: l.c.Index.Len(),
		Paused: l.c.Store.Paused(l.c.Kind)}
	if g, ok := l.c.Admission.(interface {
		Paused(time.Time) map[string]time.Time
	}); ok {
		li.Quota = g.Paused(time.Now())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	li.Standby, li.Holder = standby, holder
	for id := range l.running {
		li.Running = append(li.Running, id)
	}
	li.Sessions = sessions
	return li
}

func (l *Lane) loop(ctx context.Context, started func()) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
		case <-timer.C:
		}
		next := l.round(ctx)
		started()
		// Look again at least every second: pause files, account switches
		// and the web lock change without events.
		d := time.Second
		if !next.IsZero() {
			if u := time.Until(next); u < d {
				d = max(u, time.Millisecond)
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(d)
	}
}

// round is one scheduling round: (1) reclaim stale tasks, (2) take due
// pending tasks from the head of the index, (3) mark each running and move
// it into running/ before its work starts. It returns when it wants to run
// again (zero: no hurry).
func (l *Lane) round(ctx context.Context) time.Time {
	if l.sessions != nil && !l.ensureLocks() {
		return time.Time{}
	}
	now := time.Now()
	if now.Sub(l.lastReclaim) >= l.timing().ReclaimEvery {
		l.lastReclaim = now
		l.reclaim(now)
	}
	l.mu.Lock()
	free := l.concurrency() - len(l.running)
	draining := l.draining
	l.mu.Unlock()
	// A session lane's limit is its sessions' own: one that handed its
	// page over runs its next task while its last runner still records
	// the outcome (sessionFree), so it is not counted by running.
	if draining || l.sessions == nil && free <= 0 {
		return time.Time{}
	}
	if err := l.c.Store.LayoutFault(); err != nil {
		l.holdOnce("spool folder unsafe: " + err.Error())
		return time.Time{}
	}
	if l.c.Store.Paused(l.c.Kind) {
		l.holdOnce("lane paused: remove " + l.c.Store.Layout.Paused(l.c.Kind) + " to resume")
		return time.Time{}
	}
	disabled := map[string]bool{}
	waits := chainWaits{sessions: l.sessionAccounts()}
	gate := func(e Entry, account string) bool { return len(e.After) == 0 || waits.mayTake(l.c.Store, e, account) }
	eligible := func(e Entry) bool {
		if l.sessions == nil && !gate(e, "") {
			return false
		}
		if l.c.Admission != nil && !l.c.Admission.Admit(e, now) {
			return false
		}
		if e.Account == "" {
			return true
		}
		d, ok := disabled[e.Account]
		if !ok {
			why, until := accountBlocked(l.c.Store, e.Account, time.Now())
			switch why {
			case "disabled":
				l.holdOnce("account " + e.Account + " disabled: its tasks wait")
			case "held":
				// A usage limit holds the account, as a disabled one:
				// its tasks wait, spending nothing; others run.
				l.holdOnce("account " + e.Account + " held by a usage limit until " + until.Format(time.RFC3339) + ": its tasks wait")
			case "signed out", "challenge":
				l.holdOnce("account " + e.Account + " held (" + why + "): its tasks wait until an operator signs in or releases it")
			case "paused":
				l.holdOnce("account " + e.Account + " paused by an operator: its tasks wait until it is resumed")
			}
			d = why != ""
			disabled[e.Account] = d
		}
		return !d
	}
	if l.sessions != nil {
		return l.roundSessions(ctx, eligible, gate)
	}
	for free > 0 && !l.isDraining() {
		now = time.Now()
		entries, wake := l.c.Index.Next(now, 1, eligible)
		if len(entries) == 0 {
			if l.c.Admission != nil {
				if w := l.c.Admission.Wake(now); !w.IsZero() && (wake.IsZero() || w.Before(wake)) {
					wake = w
				}
			}
			return wake
		}
		if l.claim(ctx, entries[0], nil) {
			free--
		}
	}
	return time.Time{}
}

func (l *Lane) isDraining() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.draining
}

func (l *Lane) holdOnce(reason string) {
	if l.held != reason {
		l.held = reason
		l.c.Log.Info("held", "reason", reason)
		if l.c.Hooks.OnHold != nil {
			l.c.Hooks.OnHold(l.c.Kind, reason)
		}
	}
}

// Requeue adds a pending task (after intake or a retry) to the index.
func (l *Lane) Requeue(t *taskfile.Task) {
	l.c.Index.Put(EntryOf(l.cfg(), t))
	l.Wake()
}
