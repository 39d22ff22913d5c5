// Package liveview is signing in from the page (issue 42): an account's
// headless Chromium, on its own profile, streamed to an operator's own
// browser (CDP Page.startScreencast, JPEG frames) with their clicks, wheel
// and keys sent back (Input.dispatchMouseEvent, Input.dispatchKeyEvent,
// Input.insertText), so they can type an SMS code, scan a QR code or clear
// a challenge on a server without a display. A view holds the session's
// lock (spool.RunnerLock.Borrow) for its whole life, so no task runs on the
// account meanwhile; one operator per account at a time; it ends when the
// operator closes it, after an idle time, when their page stops asking for
// frames, when they log out or their login expires (Hooks.Alive,
// CloseOwner), or at Stop, and then stops the screencast and closes the
// browser. The console (doors/console) serves it behind its login.
package liveview

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/internal/startstop"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
)

// Defaults of Options.
const (
	DefaultIdle     = 5 * time.Minute
	DefaultGone     = 45 * time.Second
	DefaultFrameGap = 150 * time.Millisecond
	DefaultPoll     = 500 * time.Millisecond
	launchTimeout   = 90 * time.Second
)

// Errors callers branch on.
var (
	// ErrNoSession: the account is no web session of the config.
	ErrNoSession = errors.New("no web session")
	// ErrEnded: the view has ended (see View.Ended for why).
	ErrEnded = errors.New("the live view has ended")
	// ErrOpening: the view's browser is still starting.
	ErrOpening = errors.New("the live view is still opening")
	// ErrStopped: the component is not running.
	ErrStopped = errors.New("live views are stopped")
)

// InUseError is another operator's view of the account.
type InUseError struct {
	Account, Operator string
	Since             time.Time
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("account %s is in use by %s (live view since %s)", e.Account, e.Operator, e.Since.Format("15:04:05"))
}

// Ended is one view's end, for the audit trail.
type Ended struct {
	Account, Operator, Remote string
	Opened                    time.Time
	Reason                    string // closed, idle, page gone, browser gone, stopped, or the error that ended it
	SignedIn                  bool
}

// Hooks connect views to the rest of the daemon; each may be nil.
type Hooks struct {
	// OnSignedIn is called once per view when its page first shows
	// signed in (the site's check): the daemon ends the account's hold.
	OnSignedIn func(account string)
	// Free is called before a view launches its browser: whatever else
	// keeps the profile open (a warm browser of the session) closes it.
	Free func(ctx context.Context, account string) error
	// OnEnd is called once per view when it has ended and let the
	// session go.
	OnEnd func(Ended)
	// Alive reports whether the operator's console session (the owner
	// given to Open) is still logged in; checked at every Poll, a view
	// whose owner is not ends ("login ended"), letting the account go at
	// once rather than after Gone.
	Alive func(owner string) bool
}

// Options configure Views; zero durations take the defaults.
type Options struct {
	Cfg      *config.Config
	Idle     time.Duration // no input from the operator this long ends the view
	Gone     time.Duration // no request from the operator's page this long ends it
	FrameGap time.Duration // at least this long between two frames sent
	Poll     time.Duration // how often the page's signed-in check runs
	Log      *slog.Logger
	Hooks    Hooks
}

// Views are the live views of one daemon, at most one per account.
type Views struct {
	o   Options
	log *slog.Logger

	mu    sync.Mutex
	ctx   context.Context // the component's; nil before Start
	views map[string]*View
	hooks Hooks
	wg    sync.WaitGroup

	startstop.Base
}

// New returns the views, not yet started.
func New(o Options) *Views {
	if o.Idle <= 0 {
		o.Idle = DefaultIdle
	}
	if o.Gone <= 0 {
		o.Gone = DefaultGone
	}
	if o.FrameGap <= 0 {
		o.FrameGap = DefaultFrameGap
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Views{o: o, log: log, views: map[string]*View{}, hooks: o.Hooks}
}

// SetHooks replaces the hooks (the daemon wires them after the console
// started); safe on nil.
func (vs *Views) SetHooks(h Hooks) {
	if vs == nil {
		return
	}
	vs.mu.Lock()
	vs.hooks = h
	vs.mu.Unlock()
}

func (vs *Views) hooksNow() Hooks {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return vs.hooks
}

// Start lets views open until Stop, which ends every view and waits for
// each to have closed its browser and let its session go.
func (vs *Views) Start(ctx context.Context) error {
	ctx, ok, started, stopped := vs.StartInit(context.WithoutCancel(ctx))
	if !ok {
		return nil
	}
	vs.mu.Lock()
	vs.ctx = ctx
	vs.mu.Unlock()
	go func() {
		defer stopped()
		<-ctx.Done()
		vs.wg.Wait()
	}()
	started()
	return nil
}

// Get is the account's view, or nil.
func (vs *Views) Get(account string) *View {
	if vs == nil {
		return nil
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return vs.views[account]
}

// Open opens the account's live view for operator, whose console session
// is owner (the same owner gets its open view back: a reload), from
// remote. It takes the session's lock, launches the browser headless on
// the account's profile and starts the screencast; ctx bounds the start
// only; opened is false for a view the owner had open already. Another
// operator's view is an *InUseError; a task running on the account is
// spool.ErrSessionBusy; another process holding the session (`spoolgate
// login`, a second daemon) is spool.ErrLockHeld.
func (vs *Views) Open(ctx context.Context, account, operator, owner, remote string) (v *View, opened bool, err error) {
	if vs == nil {
		return nil, false, ErrStopped
	}
	sess, ok := vs.o.Cfg.WebSession(account)
	if !ok {
		return nil, false, fmt.Errorf("%w: account %q", ErrNoSession, account)
	}
	site := sess.Site
	if site == "" {
		return nil, false, fmt.Errorf("%w: account %q has no site", ErrNoSession, account)
	}
	vs.mu.Lock()
	if vs.ctx == nil || vs.ctx.Err() != nil {
		vs.mu.Unlock()
		return nil, false, ErrStopped
	}
	if cur := vs.views[account]; cur != nil {
		vs.mu.Unlock()
		if cur.owner == owner {
			return cur, false, nil
		}
		return nil, false, &InUseError{Account: account, Operator: cur.Operator, Since: cur.Opened}
	}
	vctx, cancel := context.WithCancelCause(vs.ctx)
	v = newView(vs, account, operator, owner, remote, cancel)
	vs.views[account] = v
	vs.wg.Add(1)
	vs.mu.Unlock()

	page, release, err := vs.launch(ctx, vctx, sess, operator)
	if err != nil {
		cancel(err)
		vs.forget(v)
		v.end(err.Error())
		vs.wg.Done()
		return nil, false, err
	}
	v.mu.Lock()
	v.page = page
	v.mu.Unlock()
	go func() {
		defer vs.wg.Done()
		v.run(vctx, page, release)
	}()
	return v, true, nil
}

// launch borrows the session and opens its page; ctx and vctx (the
// view's) both bound it.
func (vs *Views) launch(ctx, vctx context.Context, sess config.WebSession, operator string) (*browser.LoginPage, func(), error) {
	release, err := spool.OpenRunnerLock(sess.Lock).Borrow(vs.o.Cfg.Host, "live view of "+operator)
	if err != nil {
		return nil, nil, err
	}
	lctx, cancel := context.WithTimeout(vctx, launchTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	if free := vs.hooksNow().Free; free != nil {
		if err := free(lctx, sess.Account); err != nil {
			release()
			return nil, nil, fmt.Errorf("free the profile: %w", err)
		}
	}
	log := vs.log.With("account", sess.Account)
	page, err := browser.OpenLoginPage(lctx, vs.o.Cfg, sess.Site, sess.Profile, log)
	if err != nil {
		release()
		return nil, nil, err
	}
	return page, release, nil
}

// CloseOwner ends every view the console session owner holds (its
// operator logged out) and waits until each has let its session go.
func (vs *Views) CloseOwner(owner, reason string) {
	if vs == nil {
		return
	}
	vs.mu.Lock()
	var mine []*View
	for _, v := range vs.views {
		if v.owner == owner {
			mine = append(mine, v)
		}
	}
	vs.mu.Unlock()
	for _, v := range mine {
		v.Close(reason)
	}
}

// forget removes v from the map (if it is still there).
func (vs *Views) forget(v *View) {
	vs.mu.Lock()
	if vs.views[v.Account] == v {
		delete(vs.views, v.Account)
	}
	vs.mu.Unlock()
}
