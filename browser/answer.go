package browser

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// How an answer ends. With a positive signal named by the site, only
// proof ends it: the answer's response ended (network), or the site's
// `done` selector shows under the answer with busy gone. `quiet` (busy
// gone and the answer still for the quiet period) decides only for a
// site that names neither, so a model pausing to think, a tool call or a
// slow network no longer ends an answer early.
const (
	SignalNetwork  = "network end"
	SignalDone     = "done"
	SignalBusyGone = "busy gone"
	SignalQuiet    = "quiet"
)

// netSettle is how long the page's answer must hold still after its
// response ended before it is read from the page (copy, dom, text): the
// renderer's last frame after the last byte.
const netSettle = 100 * time.Millisecond

// signals records the completion signals seen, once each.
type signals struct {
	sent time.Time
	seen map[string]bool
	list []string
}

func (s *signals) see(name string, at time.Time) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[name] {
		return
	}
	s.seen[name] = true
	s.list = append(s.list, name+" "+at.Sub(s.sent).Round(time.Millisecond).String())
}

// readOpen reads the answer of a conversation that is already open in
// the tab, without sending anything: the last answer element is the
// answer, and it is read once it has ended, by the site's methods (all
// but network, whose response this tab did not watch from its start).
// Reattaching to a page (issue 21) calls this.
func (d *driver) readOpen(ctx context.Context) (Answer, error) {
	st, err := d.look(ctx)
	if err != nil {
		return Answer{}, d.fail(ctx, "read page: %w", err)
	}
	if st.Count == 0 {
		return Answer{}, attempt.Errorf(taskfile.ClassTransient, "site %s: the page shows no answer to read", d.siteName)
	}
	return d.awaitAnswer(ctx, pageState{Count: st.Count - 1}, nil)
}

// awaitAnswer waits for the answer to start (busy, a new answer element
// or the answer's request within the start timeout), then until it has
// ended (see the signals above); while the site's `continue` button
// shows after that, it clicks it and waits again. before is the page as
// it was before sending; nw watches the answer's response (nil: none).
// It returns the whole answer, read by the best method that delivers.
func (d *driver) awaitAnswer(ctx context.Context, before pageState, nw *netWatch) (Answer, error) {
	d.stage("waiting for the first token")
	sent := time.Now()
	var (
		tr                       answerTrack
		sig                      = signals{sent: sent}
		sawBusy, started, nudged bool
		busyGone, contAt, netAt  time.Time
		continues, contFrom      int
		contText                 string
		netParts, domParts       []string // earlier parts of a continued answer
		netBytes                 int
		behind                   pageLag
	)
	var netCh <-chan struct{}
	if nw != nil {
		netCh = nw.changed
	}
	waitStage := "waiting for the answer"
	switch {
	case d.rs.positive():
		waitStage = "waiting for the answer's end (" + strings.Join(d.positiveNames(nw), " or ") + ")"
	}
	if !d.thinkKept { // an answer already under way (a reattach): watched from now
		d.keepThinking(ctx)
	}
	defer func() { d.thinkKept = false }()
	tick := time.NewTicker(d.t.Poll)
	defer tick.Stop()
	for {
		st, err := d.look(ctx)
		if err != nil {
			return Answer{}, d.fail(ctx, "read page: %w", err)
		}
		now := time.Now()
		var ns netState
		if nw != nil {
			ns = nw.state()
		}
		fresh := st.Count > before.Count
		freshText := ""
		if fresh {
			freshText = st.Last
		}
		if msg := d.limitMsg(st, freshText); msg != "" {
			return Answer{}, d.limitErr(msg)
		}
		if st.Error != "" {
			return Answer{}, attempt.Errorf(taskfile.ClassTransient, "site %s shows an error: %s", d.siteName, st.Error)
		}
		if st.LoggedOut {
			return Answer{}, d.signedOut()
		}
		if st.Challenge != "" {
			return Answer{}, d.challenged(st.Challenge)
		}
		sawBusy = sawBusy || st.Busy
		if !started && (st.Busy || fresh || ns.Seen) {
			started = true
			d.step("first token", "after", now.Sub(sent).Round(time.Millisecond), "busy", st.Busy, "request", ns.Seen)
			d.stage(waitStage)
		}
		if !started && !nudged && now.Sub(sent) > 2*time.Second && normField(st.InputText) != "" {
			// The trusted click did not take (an overlay, a button that
			// wants a real element click): press it from the page once.
			nudged = true
			d.log.Warn("driver: send did not start a generation; clicking it from the page")
			if err := d.jsClick(ctx, d.site.Send, "q"); err != nil {
				return Answer{}, d.fail(ctx, "click send: %w", err)
			}
		}
		if !started && now.Sub(sent) > d.t.Start {
			ex := d.excerpt(ctx)
			d.log.Warn("driver: no answer started", "startTimeout", d.t.Start, "pageText", ex)
			return Answer{}, attempt.Errorf(taskfile.ClassTransient, "site %s: no answer started within %s of sending (neither busy nor a new answer showed); the page reads: %q", d.siteName, d.t.Start, ex)
		}
		if contAt != (time.Time{}) && (st.Busy || st.Last != contText || st.Count > contFrom || (ns.Seen && !ns.Ended)) {
			contAt = time.Time{} // the continuation began: busy, more text, its request
		}
		if fresh {
			if contFrom > 0 && st.Count > contFrom {
				// The continuation opened an answer element of its own.
				domParts, tr, contFrom = append(domParts, tr.whole(tr.last)), answerTrack{}, st.Count
			}
			if tr.take(st.Last, st.LastID, now, d) {
				d.beat()
			}
		}
		if ns.Bytes != netBytes {
			netBytes = ns.Bytes
			d.beat()
		}
		switch {
		case st.Busy:
			busyGone = time.Time{}
		case sawBusy && busyGone.IsZero():
			busyGone = now
			sig.see(SignalBusyGone, now)
		}
		if ns.Ended && netAt.IsZero() && contAt.IsZero() {
			netAt = ns.EndedAt
			sig.see(SignalNetwork, ns.EndedAt)
		}
		doneNow := fresh && st.DoneLast && !st.Busy && d.rs.done != ""
		if doneNow {
			sig.see(SignalDone, now)
		}
		quietNow := !st.Busy && fresh && now.Sub(tr.stillSince) >= d.t.Quiet
		if quietNow && !d.rs.positive() {
			sig.see(SignalQuiet, now)
		}
		endedBy := ""
		switch {
		case !started || contAt != (time.Time{}):
		case fresh && st.ErrTurn && !st.Busy:
			endedBy = "error turn"
		case !netAt.IsZero() && d.netFirst(ns):
			endedBy = SignalNetwork // the answer is the response's: no need to wait for the page
		case doneNow:
			endedBy = SignalDone
		case !netAt.IsZero() && !st.Busy && (fresh || ns.Failed == "") && now.Sub(maxTime(netAt, tr.stillSince)) >= behind.settle(d, ns, st.Last):
			endedBy = SignalNetwork // read from the page once it has rendered the end
		case !d.rs.positive() && quietNow:
			endedBy = SignalQuiet
		}
		switch {
		case endedBy != "" && st.Continue && continues < maxContinues:
			continues++
			if ans, _, _, _ := d.readOne(ctx, MethodNetwork, nw, nil); ans != "" {
				netParts = append(netParts, ans)
			}
			if _, err := d.clickAt(ctx, d.site.Continue, true); err != nil {
				return Answer{}, d.fail(ctx, "click continue: %w", err)
			}
			contAt, contText, contFrom, netAt = time.Now(), st.Last, st.Count, time.Time{}
			tr.stillSince = contAt
			d.step("continue clicked", "n", continues, "chars so far", utf8.RuneCountInString(st.Last))
		case endedBy != "":
			return d.finish(ctx, st, &tr, nw, sig, endedBy, netParts, domParts, continues, sent)
		case contAt != (time.Time{}) && now.Sub(contAt) >= d.t.Start:
			d.log.Warn("driver: clicking continue changed nothing; taking the answer as it is")
			return d.finish(ctx, st, &tr, nw, sig, "continue changed nothing", netParts, domParts, continues, sent)
		case !st.Busy && sawBusy && !fresh && !ns.Seen && now.Sub(busyGone) > d.t.Quiet:
			return Answer{}, attempt.Errorf(taskfile.ClassTransient, "site %s: the generation ended without an answer", d.siteName)
		}
		select {
		case <-ctx.Done():
			return Answer{}, d.fail(ctx, "%s: %w", waitStage, context.Cause(ctx))
		case <-tick.C:
		case <-netCh:
		}
	}
}

// pageLag tells whether the page still shows only a beginning of what
// the ended response carried: a page that types its answer out after the
// last byte (nlux, many chat kits) is still writing, and a stall of its
// animation on a busy machine is not its end. Such a page must hold still
// for the site's quiet, not netSettle, before it is read; one that has
// caught up (or shows something else, a render of its own) needs only
// netSettle. The response's text is extracted once per response.
type pageLag struct {
	at   time.Time // the EndedAt of the response the text was taken from
	text string
}

func (l *pageLag) settle(d *driver, ns netState, shown string) time.Duration {
	if d.rs.network == nil || !ns.Ended || ns.Failed != "" || ns.BodyErr != nil {
		return netSettle
	}
	if !ns.EndedAt.Equal(l.at) {
		l.at = ns.EndedAt
		l.text, _ = extract(*d.rs.network, ns.Body)
	}
	if strings.TrimSpace(l.text) == "" || !pageBehind(l.text, FormatMarkdown, shown) {
		return netSettle
	}
	return max(d.t.Quiet, netSettle)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// netFirst reports whether the answer is to be read from its response
// (network is the first method) and that response delivers text.
func (d *driver) netFirst(ns netState) bool {
	if len(d.rs.methods) == 0 || d.rs.methods[0] != MethodNetwork || !ns.Ended || ns.Failed != "" || ns.BodyErr != nil || d.rs.network == nil {
		return false
	}
	text, err := extract(*d.rs.network, ns.Body)
	return err == nil && strings.TrimSpace(text) != ""
}

// positiveNames names the positive signals the site gives, for the stage.
func (d *driver) positiveNames(nw *netWatch) []string {
	var out []string
	if nw != nil {
		out = append(out, "its response ends")
	}
	if d.rs.done != "" {
		out = append(out, fmt.Sprintf("done %q shows", d.rs.done))
	}
	if len(out) == 0 {
		out = append(out, "quiet")
	}
	return out
}

// finish checks the ended answer (an error turn, empty) and reads it.
func (d *driver) finish(ctx context.Context, st pageState, tr *answerTrack, nw *netWatch, sig signals, endedBy string, netParts, domParts []string, continues int, sent time.Time) (Answer, error) {
	if st.ErrTurn {
		text := taskfile.OneLine(st.Last)
		return Answer{}, attempt.Errorf(taskfile.ClassTransient, "site %s answered with its error turn (errorTurn %q): %q", d.siteName, d.rs.errorTurn, text)
	}
	a, err := d.readBy(ctx, nw, tr, len(netParts)+len(domParts) == 0)
	if err != nil {
		return a, err
	}
	a.Signals, a.EndedBy = sig.list, endedBy
	if a.Text == "" {
		ex := d.excerpt(ctx)
		return a, attempt.Errorf(taskfile.ClassTransient, "site %s answered with empty text (ended by %s); the page reads: %q", d.siteName, endedBy, ex)
	}
	switch {
	case a.Method == MethodNetwork && len(netParts) > 0:
		a.Text = strings.TrimSpace(strings.Join(netParts, "") + a.Text)
	case a.Method != MethodNetwork && len(domParts) > 0:
		a.Text = strings.TrimSpace(strings.Join(append(domParts, a.Text), "\n"))
	}
	if len(netParts)+len(domParts) > 0 && !d.rs.noCheck {
		began := time.Now()
		a.Check, _ = d.pageCheck(ctx, a.Text, a.Format) // the parts joined, as the page may show them
		a.CheckTook += time.Since(began)
	}
	if a.Check.State == CheckDiffers && d.rs.strict {
		return Answer{}, attempt.Errorf(taskfile.ClassTransient, "site %s: the answer read by %s differs from the page (verify: strict): %s", d.siteName, a.Method, a.Check.Diff)
	}
	if tr.replaced > 0 {
		d.log.Info("driver: the answer element was replaced while it streamed", "times", tr.replaced)
	}
	d.step("answer finished", "chars", utf8.RuneCountInString(a.Text), "method", a.Method, "format", a.Format, "endedBy", endedBy,
		"signals", strings.Join(a.Signals, ", "), "check", a.Check.State, "checkTook", a.CheckTook.Round(100*time.Microsecond), "continues", continues, "after", time.Since(sent).Round(time.Millisecond))
	return a, nil
}
