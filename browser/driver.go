package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The driver talks to the page only through Runtime.evaluate of small
// expressions polled with a deadline, Input.insertText, key events and
// mouse events at coordinates. The issue reported chromedp's node-tracking
// actions (Click, WaitVisible) hanging against a page whose script changes
// the DOM. Checked here against the stand-in while its answer streams
// (chromedp v0.23.1, Chromium 156): they did not hang (WaitVisible
// 20-35 ms, Click 7-25 ms). The driver still avoids them: they depend on
// the DOM domain's node tree, which a busy page rebuilds under them, and
// they do not enter shadow roots, while one evaluate per look is a single
// round-trip under the caller's deadline, sees exactly what the page's own
// script sees, and works the same for every kind of input.

// Timings is how long each phase of a chat may take.
type Timings struct {
	PageLoad time.Duration // navigation until the input, loggedOut or limited shows
	// InputGrace is how long a page that has finished loading may take to
	// show its input before the input's selector counts as missing.
	InputGrace time.Duration
	// Start is how long after send the page may take to show busy or a
	// new answer (sites.S.startTimeout wins when set; default 60 s).
	Start time.Duration
	Quiet time.Duration // the answer must hold still this long once busy is gone
	Poll  time.Duration // how often the page is looked at
}

func (t Timings) withDefaults() Timings {
	if t.PageLoad <= 0 {
		t.PageLoad = 60 * time.Second
	}
	if t.InputGrace <= 0 {
		t.InputGrace = 15 * time.Second
	}
	if t.Start <= 0 {
		t.Start = 60 * time.Second
	}
	if t.Quiet <= 0 {
		t.Quiet = time.Second
	}
	if t.Poll <= 0 {
		t.Poll = 50 * time.Millisecond
	}
	return t
}

// maxContinues bounds the "Continue generating" clicks of one answer.
const maxContinues = 20

// driver drives one chat on a page described only by a config.SiteConfig.
type driver struct {
	site     config.SiteConfig
	siteName string
	t        Timings
	log      *slog.Logger
	beat     func()
	stage    func(string)
	limitRE  []*regexp.Regexp
	rs       readSpec  // how the answer is read and known to have ended
	began    time.Time // the attempt's start, for the step log
	modes    string    // the page modes set and read back before the send ("deepThink on, search off")
	// holdScale multiplies a usage limit's hold (tests shorten it).
	holdScale float64
	// afterRead, when set, runs between a method's read and the check of
	// that read against the page (tests: a page that renders just then).
	afterRead func(ctx context.Context)
	// netBodyOnly reads the answer's response only by getResponseBody
	// (tests force the path a slow machine takes).
	netBodyOnly bool
	// sockets keeps the tab's WebSocket URLs from before the page loads,
	// for a network key that reads a socket's frames (nil otherwise).
	sockets *socketLog

	send  sender                           // records the send; zero: nothing recorded (check --send)
	conv  convKeys                         // the site's conversation keys, for a reattach
	watch func(context.Context, pageState) // called with each look (watchSent)
	// The attempt's sending record and delivery line, once written.
	sending  *taskfile.SendRecord
	delivery *taskfile.Delivery
	// What the attempt attached (upload.go), for its delivery line.
	attached, attachNote string
	// thinkKept: the thinking is watched from before the send
	// (keepThinking), so the answer's wait does not start it again.
	thinkKept bool
}

func newDriver(site config.SiteConfig, name string, t Timings, log *slog.Logger) *driver {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &driver{site: site, siteName: name, t: t, log: log, beat: func() {}, stage: func(string) {}, began: time.Now(), holdScale: 1}
	if site.StartTimeout > 0 {
		d.t.Start = site.StartTimeout.D()
	}
	if site.Quiet > 0 && d.t.Quiet <= 0 {
		d.t.Quiet = site.Quiet.D()
	}
	d.t = d.t.withDefaults()
	d.rs = readSpecOf(site)
	d.conv = convKeys{history: site.History, userMessage: site.UserMessage, notFound: site.NotFound}
	if site.Conversation != "" {
		d.conv.pattern, _ = regexp.Compile(site.Conversation) // the config loader checked it
	}
	for _, p := range site.LimitedText {
		if re, err := regexp.Compile(p); err == nil { // the config loader checked them
			d.limitRE = append(d.limitRE, re)
		}
	}
	return d
}

// step logs one step of the chat with the time since the attempt began.
func (d *driver) step(msg string, args ...any) {
	d.log.Info("driver: "+msg, append([]any{"at", time.Since(d.began).Round(time.Millisecond)}, args...)...)
}

// chat runs one exchange and returns the answer. A task whose
// prompt was sent before is reattached to its conversation first (see
// reattach); it is sent again, in a new chat, only when that fails.
func (d *driver) chat(ctx context.Context, model *config.ModelConfig, task *taskfile.Task) (Answer, error) {
	text := inputText(model, task, d.site) // what is typed, and what a reattach looks for
	th := task.Thread
	transcript := th != nil && wentTranscript(th, task.Send)
	if transcript {
		text = taskfile.TranscriptText(th.Turns, text)
	}
	p := plan{how: taskfile.DeliverySent}
	if prev := task.Send; prev != nil && d.send.record != nil {
		ans, done, np, err := d.reattach(ctx, prev, text)
		if err != nil || done {
			return ans, err
		}
		p = np
		d.log.Warn("driver: sending again", "reason", p.reason, "possibleDoubleSend", p.double)
	}
	inThread := false
	if th != nil && !transcript {
		// A follow-up: typed as the next message of its parent's chat.
		gone, err := d.openThread(ctx, th)
		switch {
		case err != nil:
			return Answer{}, err
		case gone == "":
			inThread = true
		case model.FollowUpFallback != config.FollowUpTranscript:
			return Answer{}, attempt.Errorf(taskfile.ClassPermanent, "followUp: the chat of %s is gone: %s", th.Turns[len(th.Turns)-1].TaskID, gone)
		default:
			text = taskfile.TranscriptText(th.Turns, text)
			p.reason = strings.TrimPrefix(p.reason+"; ", "; ") + "followUp: the chat of " + th.Turns[len(th.Turns)-1].TaskID + " is gone (" + gone + "): a new chat, the earlier turns sent as a transcript (followUpFallback)"
			d.log.Warn("driver: "+p.reason, "conversation", th.Conversation)
		}
	}
	if !inThread {
		st, err := d.open(ctx)
		if err != nil {
			return Answer{}, err
		}
		if msg := d.limitMsg(st, ""); msg != "" {
			return Answer{}, d.limitErr(msg)
		}
	}
	d.beat()

	if d.site.NewChat != "" && !inThread {
		d.stage("starting a new chat")
		if found, err := d.click(ctx, d.site.NewChat); err != nil {
			return Answer{}, d.fail(ctx, "click newChat: %w", err)
		} else if !found {
			d.log.Warn("driver: newChat selector matches nothing; continuing in the current chat", "selector", d.site.NewChat)
		} else {
			d.step("new chat")
		}
	}

	if len(model.Modes) > 0 {
		d.stage("setting the modes")
		var err error
		if d.modes, err = d.setModes(ctx, model.Modes); err != nil {
			return Answer{}, err
		}
	}

	d.stage("typing the message")
	switch {
	case model.NeedEmptyPrompt:
		// Only the user content goes out: no task prompt, and no default
		// instructions the page pre-filled (trap 2 of the field report).
		if d.site.PromptInput != "" {
			if _, err := d.setText(ctx, "promptInput", d.site.PromptInput, ""); err != nil {
				return Answer{}, err
			}
		}
		if task.Prompt != "" {
			d.log.Info("driver: model has needEmptyPrompt; the task's prompt is not sent")
		}
	case task.Prompt != "" && d.site.PromptInput != "":
		ty, err := d.setText(ctx, "promptInput", d.site.PromptInput, task.Prompt)
		if err != nil {
			return Answer{}, err
		}
		d.step("prompt typed", "chars", ty.Chars, "field", ty.Kind, "method", ty.Method, "verified", true, "took", ty.Took.Round(time.Millisecond))
	}
	ty, err := d.setText(ctx, "input", d.site.Input, text)
	if err != nil {
		return Answer{}, err
	}
	d.step("text typed", "chars", ty.Chars, "field", ty.Kind, "method", ty.Method, "verified", true, "took", ty.Took.Round(time.Millisecond))
	cleanup, err := d.attachFiles(ctx, task)
	defer cleanup()
	if err != nil {
		return Answer{}, err
	}

	before, err := d.look(ctx)
	if err != nil {
		return Answer{}, d.fail(ctx, "read page: %w", err)
	}
	// The answer's response is watched from before the send: its first
	// bytes come right after it.
	var nw *netWatch
	if d.rs.network != nil {
		if nw, err = startNetWatch(ctx, *d.rs.network, d.netBodyOnly, d.sockets, d.log.Warn); err != nil {
			return Answer{}, d.fail(ctx, "watch the network: %w", err)
		}
		defer nw.Stop()
	}
	d.stage("sending")
	if err := d.recordSending(p); err != nil {
		return Answer{}, err
	}
	d.keepThinking(ctx) // from before the send: a fast answer's thinking may come and go before the wait
	if found, err := d.click(ctx, d.site.Send); err != nil {
		return Answer{}, d.fail(ctx, "click send: %w", err)
	} else if !found {
		return Answer{}, d.missing("send", d.site.Send, before.SendShadow, "")
	}
	d.step("sent")
	d.beat()
	if d.send.record != nil {
		d.watch = d.watchSent(before)
		defer func() { d.watch = nil }()
	}
	return d.awaitAnswer(ctx, before, nw)
}

// inputText is what goes into the site's input: the content, after the
// task's prompt and a blank line when the site has no promptInput and the
// model sends one.
func inputText(model *config.ModelConfig, task *taskfile.Task, site config.SiteConfig) string {
	if task.Prompt != "" && !model.NeedEmptyPrompt && site.PromptInput == "" {
		return task.Prompt + "\n\n" + task.Content
	}
	return task.Content
}

// open loads the site and waits until its input, its signed-out link or
// its usage-limit message shows. A page that loaded but shows none of
// them within the input grace has a selector that no longer matches.
func (d *driver) open(ctx context.Context) (pageState, error) {
	return d.openURL(ctx, d.site.URL)
}

// openURL is open for any page of the site (a conversation's).
func (d *driver) openURL(ctx context.Context, u string) (pageState, error) {
	d.stage("opening page")
	lctx, cancel := context.WithTimeout(ctx, d.t.PageLoad)
	var err error
	if d.rs.copy != "" {
		// The page's clipboard writes are caught from its first script
		// on (a page may keep its own reference to writeText).
		err = installCopyCatch(lctx)
	}
	if err == nil && d.sockets == nil && d.rs.network != nil && d.rs.network.Format == NetWebSocket {
		// The page opens its socket as it loads: its URL comes only then.
		// The log lives as long as the tab (ctx), not this load.
		d.sockets, err = startSocketLog(ctx)
	}
	if err == nil {
		err = navigate(lctx, u) // not its load event: a never-loading third party would hold it
	}
	cancel()
	if err != nil {
		return pageState{}, d.fail(ctx, "open %s: %w", u, err)
	}
	clock := newLoadClock(d.t, time.Now())
	for {
		st, err := d.look(ctx)
		if err == nil && st.Challenge != "" && (st.Input || clock.graceOver(time.Now())) {
			// A widget over the chat page holds at once; a page without
			// the input gets the grace first: an interstitial that passes
			// by itself is no challenge.
			d.step("page loaded", "url", u)
			return st, d.challenged(st.Challenge)
		}
		if err == nil && (st.LoggedOut || st.Input || st.Limited != "") {
			d.step("page loaded", "url", u)
			if st.LoggedOut {
				d.step("logged-in check", "signedIn", false)
				return st, d.signedOut()
			}
			d.step("logged-in check", "signedIn", true)
			return st, nil
		}
		now := time.Now()
		if err == nil && st.Ready {
			clock.ready(now)
		}
		switch {
		case err == nil && clock.graceOver(now):
			return st, d.missing("input", d.site.Input, st.InputShadow, st.InputBad)
		case clock.expired(now):
			if err != nil {
				return st, d.fail(ctx, "waiting for the page: %w", err)
			}
			return st, attempt.Errorf(taskfile.ClassTransient, "site %s: the page did not finish loading within %s", d.siteName, d.t.PageLoad)
		}
		select {
		case <-ctx.Done():
			return st, d.fail(ctx, "waiting for the page: %w", context.Cause(ctx))
		case <-time.After(d.t.Poll):
		}
	}
}

// loadClock is how long a page may take to show what is waited for: at
// most Timings.InputGrace once document.readyState is complete, and never
// past Timings.PageLoad. openURL and suggest's waitRest share it so that
// both give up on a page by the same rule.
type loadClock struct {
	grace    time.Duration
	deadline time.Time
	loaded   time.Time // when the page first reported ready; zero: not yet
}

// newLoadClock starts the wait at now.
func newLoadClock(t Timings, now time.Time) loadClock {
	return loadClock{grace: t.InputGrace, deadline: now.Add(t.PageLoad)}
}

// ready records that the page reported document.readyState complete at
// now; only the first report counts.
func (c *loadClock) ready(now time.Time) {
	if c.loaded.IsZero() {
		c.loaded = now
	}
}

// graceOver is whether the page reported ready more than the input grace
// before now.
func (c *loadClock) graceOver(now time.Time) bool {
	return !c.loaded.IsZero() && now.Sub(c.loaded) > c.grace
}

// expired is whether now is past the page-load deadline.
func (c *loadClock) expired(now time.Time) bool {
	return now.After(c.deadline)
}

// signedOut is the error of a page that shows the site's signed-out
// page, the front page's or a conversation's: an account problem.
func (d *driver) signedOut() error {
	return d.signInHold(taskfile.HoldSignedOut, "the page shows its signed-out link ("+d.site.LoggedOut+")",
		fmt.Sprintf("site %s shows its signed-out page: the account is held until `spoolgate login %s` signs the web profile in", d.siteName, d.siteName))
}

// fail wraps a driving failure. When ctx ended, the cause is kept so the
// executor can tell a cancel or a timeout from a page problem.
func (d *driver) fail(ctx context.Context, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if ctx.Err() != nil && !errors.Is(err, context.Cause(ctx)) {
		err = fmt.Errorf("%w (%w)", err, context.Cause(ctx))
	}
	return err
}

// navigate loads u in the tab and returns once the new document is
// parsed and its own deferred and module scripts have run (its loader's
// DOMContentLoaded), not once it has loaded: the load event waits for
// every subresource, and a third-party async script, frame or pixel that
// never answers would hold the page for Timings.PageLoad and fail a task
// whose page was ready all along (issue 55). DOMContentLoaded is still
// awaited so that nothing is typed into a field the page's own script
// has not taken over yet. What the page is then waited for is its own
// elements (openURL's and waitRest's loops).
func navigate(ctx context.Context, u string) error {
	var mu sync.Mutex
	seen := map[cdp.LoaderID]bool{}
	wake := make(chan struct{}, 1)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err := chromedp.Listen(lctx, func(ev any) {
		if e, ok := ev.(*page.EventLifecycleEvent); ok && e.LoaderID != "" && (e.Name == "DOMContentLoaded" || e.Name == "load") {
			mu.Lock()
			seen[e.LoaderID] = true
			mu.Unlock()
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		return err
	}
	res, err := chromedp.Call(ctx, page.Navigate, page.NavigateParams{URL: u})
	switch {
	case err != nil:
		return err
	case res.ErrorText != "":
		return fmt.Errorf("navigate to %s: %s", u, res.ErrorText)
	case res.LoaderID == "":
		return nil // within the document: nothing new to wait for
	}
	for {
		mu.Lock()
		ok := seen[res.LoaderID]
		mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("navigate to %s: %w", u, context.Cause(ctx))
		}
	}
}
