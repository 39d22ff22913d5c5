package liveview

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/internal/startstop"
)

// Frame is one image of the page.
type Frame struct {
	Seq  int64  // 1, 2, ... in the order sent
	JPEG []byte // the image
	// Width and Height are the page's viewport in CSS pixels, which
	// Input's coordinates are fractions of.
	Width, Height float64
}

// State is what the operator's page shows besides the image.
type State struct {
	Operator string
	SignedIn bool   // the page has shown signed in
	Ended    string // why the view ended, "" while open
}

// View is one account's live view.
type View struct {
	Account, Operator, Remote string
	Opened                    time.Time

	vs     *Views
	owner  string
	cancel context.CancelCauseFunc
	done   chan struct{}      // closed when the view has ended
	page   *browser.LoginPage // under mu: set before run starts
	inMu   sync.Mutex         // one input event at a time

	mu       sync.Mutex
	frame    Frame
	changed  chan struct{} // closed and replaced at each new frame or state change
	signedIn bool
	ended    string
	lastSeen time.Time // the operator's page asked for a frame
	lastIn   time.Time // the operator's last input

	// events from the tab's read loop (chromedp.Listen: no command there)
	evMu    sync.Mutex
	pending []*page.EventScreencastFrame
	evSig   chan struct{}
}

func newView(vs *Views, account, operator, owner, remote string, cancel context.CancelCauseFunc) *View {
	now := time.Now()
	return &View{Account: account, Operator: operator, Remote: remote, Opened: now, vs: vs, owner: owner, cancel: cancel,
		done: make(chan struct{}), changed: make(chan struct{}), lastSeen: now, lastIn: now, evSig: make(chan struct{}, 1)}
}

// Owner reports whether the console session owner holds the view.
func (v *View) Owner(owner string) bool { return v.owner == owner }

// Done is closed when the view has ended.
func (v *View) Done() <-chan struct{} { return v.done }

// State is the view's state now.
func (v *View) State() State {
	v.mu.Lock()
	defer v.mu.Unlock()
	return State{Operator: v.Operator, SignedIn: v.signedIn, Ended: v.ended}
}

// Close ends the view (the operator closed it) and waits until its
// browser is closed and its session let go. Safe twice.
func (v *View) Close(reason string) {
	v.cancel(errors.New(reason))
	<-v.done
}

// Frame waits for a frame newer than after (or a change of state), at
// most until ctx ends, and returns the latest frame and the state. It
// counts as the operator's page being there.
func (v *View) Frame(ctx context.Context, after int64) (Frame, State) {
	for {
		v.mu.Lock()
		v.lastSeen = time.Now()
		f, ch := v.frame, v.changed
		st := State{Operator: v.Operator, SignedIn: v.signedIn, Ended: v.ended}
		v.mu.Unlock()
		if f.Seq > after || st.Ended != "" {
			return f, st
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return f, st
		}
	}
}

// notify wakes every Frame waiting; v.mu held.
func (v *View) notify() {
	close(v.changed)
	v.changed = make(chan struct{})
}

// end records why the view ended and closes done (once).
func (v *View) end(reason string) {
	v.mu.Lock()
	if v.ended == "" {
		v.ended = reason
		v.notify()
		close(v.done)
	}
	v.mu.Unlock()
}

// event is the tab's event listener: it only queues (see chromedp.Listen).
func (v *View) event(ev any) {
	f, ok := ev.(*page.EventScreencastFrame)
	if !ok {
		return
	}
	v.evMu.Lock()
	v.pending = append(v.pending, f)
	v.evMu.Unlock()
	select {
	case v.evSig <- struct{}{}:
	default:
	}
}

// run is the view's life: frames in, acknowledged no faster than the
// frame gap (the browser sends the next only then), the signed-in check,
// the idle limits, its operator's login; at its end the screencast stops,
// the browser closes, the session is let go, and OnEnd is called.
func (v *View) run(ctx context.Context, p *browser.LoginPage, release func()) {
	o := v.vs.o
	reason := "stopped"
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(p.Tab()), 2*time.Second)
		_, _ = chromedp.Call(sctx, page.StopScreencast, cdp.Empty{})
		cancel()
		p.Close()
		release()
		v.vs.forget(v)
		switch c := context.Cause(ctx); {
		case errors.Is(c, startstop.ErrStop):
			reason = "stopped"
		case c != nil && !errors.Is(c, context.Canceled):
			reason = c.Error()
		}
		v.cancel(errors.New(reason))
		v.end(reason)
		st := v.State()
		v.vs.log.Info("live view ended", "account", v.Account, "operator", v.Operator, "reason", st.Ended, "signedIn", st.SignedIn)
		if f := v.vs.hooksNow().OnEnd; f != nil {
			f(Ended{Account: v.Account, Operator: v.Operator, Remote: v.Remote, Opened: v.Opened, Reason: st.Ended, SignedIn: st.SignedIn})
		}
	}()
	tab := p.Tab()
	lctx, stopListen := context.WithCancel(tab)
	defer stopListen()
	if err := chromedp.Listen(lctx, v.event); err != nil {
		reason = "screencast: " + err.Error()
		return
	}
	q := int64(70)
	if _, err := chromedp.Call(tab, page.StartScreencast, page.StartScreencastParams{Format: page.StartScreencastFormatJpeg, Quality: &q, MaxFramesInFlight: 1}); err != nil {
		reason = "screencast: " + err.Error()
		return
	}
	v.mu.Lock()
	v.lastIn, v.lastSeen = time.Now(), time.Now() // the idle clocks start with the stream, not the launch
	v.mu.Unlock()
	v.vs.log.Info("live view opened", "account", v.Account, "operator", v.Operator)
	poll := time.NewTicker(o.Poll)
	defer poll.Stop()
	var lastAck time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tab.Done():
			reason = "browser gone"
			return
		case <-v.evSig:
			evs := v.publish()
			if wait := o.FrameGap - time.Since(lastAck); wait > 0 {
				// The rate limit: the browser sends the next frame only
				// once this one is acknowledged.
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
			ack(tab, evs)
			lastAck = time.Now()
		case now := <-poll.C:
			if alive := v.vs.hooksNow().Alive; alive != nil && !alive(v.owner) {
				reason = "login ended" // the operator's login expired (or they logged out)
				return
			}
			if why := v.idle(now); why != "" {
				reason = why
				return
			}
			v.checkSignedIn(ctx, p)
		}
	}
}

// publish shows the newest queued frame and returns the queue, to be
// acknowledged.
func (v *View) publish() []*page.EventScreencastFrame {
	v.evMu.Lock()
	evs := v.pending
	v.pending = nil
	v.evMu.Unlock()
	if len(evs) == 0 {
		return nil
	}
	last := evs[len(evs)-1]
	v.mu.Lock()
	f := Frame{Seq: v.frame.Seq + 1, JPEG: last.Data}
	if m := last.Metadata; m != nil {
		f.Width, f.Height = m.DeviceWidth, m.DeviceHeight
	}
	v.frame = f
	v.notify()
	v.mu.Unlock()
	return evs
}

// ack acknowledges frames to the browser.
func ack(tab context.Context, evs []*page.EventScreencastFrame) {
	for _, ev := range evs {
		actx, cancel := context.WithTimeout(tab, 5*time.Second)
		_, _ = chromedp.Call(actx, page.ScreencastFrameAck, page.ScreencastFrameAckParams{SessionID: ev.SessionID})
		cancel()
	}
}

// idle says why the view should end now for want of its operator.
func (v *View) idle(now time.Time) string {
	o := v.vs.o
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case now.Sub(v.lastIn) > o.Idle:
		return "idle"
	case now.Sub(v.lastSeen) > o.Gone:
		return "page gone"
	}
	return ""
}

// checkSignedIn runs the site's signed-in check; the first time it
// passes, the page says so and OnSignedIn ends the account's hold.
func (v *View) checkSignedIn(ctx context.Context, p *browser.LoginPage) {
	if v.State().SignedIn {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	ok, err := p.SignedIn(cctx)
	cancel()
	if err != nil || !ok {
		return
	}
	v.mu.Lock()
	first := !v.signedIn
	v.signedIn = true
	if first {
		v.notify()
	}
	v.mu.Unlock()
	if !first {
		return
	}
	v.vs.log.Info("live view: the page shows signed in", "account", v.Account, "operator", v.Operator)
	if f := v.vs.hooksNow().OnSignedIn; f != nil {
		f(v.Account)
	}
}
