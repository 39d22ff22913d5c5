package browser

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// answerWatch is what awaitAnswer has seen of the answer so far.
type answerWatch struct {
	best       string    // the longest read of the current answer element
	parts      []string  // earlier elements, when a continuation opened a new one
	last       string    // the last read, to see it change
	stillSince time.Time // when last changed last
	shorter    bool      // a shorter read was seen and ignored (logged once)
}

// take records one read of the answer element; a read shorter than the
// best one is not taken (a page re-rendering its answer, a virtualised
// list that drops the top): a result is never replaced by a shorter read.
func (w *answerWatch) take(text string, now time.Time, d *driver) {
	if w.stillSince.IsZero() || text != w.last {
		w.last, w.stillSince = text, now
		d.beat()
	}
	if utf8.RuneCountInString(text) >= utf8.RuneCountInString(w.best) {
		w.best = text
	} else if !w.shorter {
		w.shorter = true
		d.log.Warn("driver: the answer read shorter than before; keeping the longer read", "had", utf8.RuneCountInString(w.best), "read", utf8.RuneCountInString(text))
	}
}

func (w *answerWatch) result() string {
	return strings.TrimSpace(strings.Join(append(append([]string(nil), w.parts...), w.best), "\n"))
}

// awaitAnswer waits for the answer to start (busy or a new answer element
// within the start timeout), then until busy is gone and the last answer
// has held still for the quiet period; while the site's `continue` button
// shows after that, it clicks it and waits again. It returns the whole
// answer.
func (d *driver) awaitAnswer(ctx context.Context, before pageState) (string, error) {
	d.stage("waiting for the first token")
	sent := time.Now()
	var (
		w                        answerWatch
		sawBusy, started, nudged bool
		busyGone, contAt         time.Time
		continues, contFrom      int
		contText                 string
	)
	tick := time.NewTicker(d.t.Poll)
	defer tick.Stop()
	for {
		st, err := d.look(ctx)
		if err != nil {
			return "", d.fail(ctx, "read page: %w", err)
		}
		now := time.Now()
		fresh := st.Count > before.Count
		freshText := ""
		if fresh {
			freshText = st.Last
		}
		if msg := d.limitMsg(st, freshText); msg != "" {
			return "", d.limitErr(msg)
		}
		if st.Error != "" {
			return "", attempt.Errorf(taskfile.ClassTransient, "site %s shows an error: %s", d.siteName, st.Error)
		}
		if st.LoggedOut {
			return "", attempt.Errorf(taskfile.ClassAccount, "site %s signed out during the answer: run `spoolgate login %s`", d.siteName, d.siteName)
		}
		sawBusy = sawBusy || st.Busy
		if !started && (st.Busy || fresh) {
			started = true
			d.step("first token", "after", now.Sub(sent).Round(time.Millisecond), "busy", st.Busy)
			d.stage("waiting for the answer")
		}
		if !started && !nudged && now.Sub(sent) > 2*time.Second && normField(st.InputText) != "" {
			// The trusted click did not take (an overlay, a button that
			// wants a real element click): press it from the page once.
			nudged = true
			d.log.Warn("driver: send did not start a generation; clicking it from the page")
			if err := d.jsClick(ctx, d.site.Send, "q"); err != nil {
				return "", d.fail(ctx, "click send: %w", err)
			}
		}
		if !started && now.Sub(sent) > d.t.Start {
			ex := d.excerpt(ctx)
			d.log.Warn("driver: no answer started", "startTimeout", d.t.Start, "pageText", ex)
			return "", attempt.Errorf(taskfile.ClassTransient, "site %s: no answer started within %s of sending (neither busy nor a new answer showed); the page reads: %q", d.siteName, d.t.Start, ex)
		}
		if contAt != (time.Time{}) && (st.Busy || st.Last != contText || st.Count > contFrom) {
			contAt = time.Time{} // the continuation began: busy, or more text
		}
		if fresh {
			if contFrom > 0 && st.Count > contFrom {
				// The continuation opened an answer element of its own.
				w.parts, w.best, w.shorter, contFrom = append(w.parts, w.best), "", false, st.Count
			}
			w.take(st.Last, now, d)
		}
		switch {
		case st.Busy:
			busyGone = time.Time{}
		case sawBusy && busyGone.IsZero():
			busyGone = now
		}
		settled := !st.Busy && fresh && now.Sub(w.stillSince) >= d.t.Quiet
		switch {
		case settled && contAt != (time.Time{}) && now.Sub(contAt) < d.t.Start:
			// Clicked continue; wait for it to take.
		case settled && st.Continue && continues < maxContinues && contAt.IsZero():
			continues++
			if _, err := d.clickAt(ctx, d.site.Continue, true); err != nil {
				return "", d.fail(ctx, "click continue: %w", err)
			}
			contAt, contText, contFrom = time.Now(), st.Last, st.Count
			w.stillSince = contAt
			d.step("continue clicked", "n", continues, "chars so far", utf8.RuneCountInString(w.result()))
		case settled:
			if contAt != (time.Time{}) {
				d.log.Warn("driver: clicking continue changed nothing; taking the answer as it is")
			}
			ans := w.result()
			if ans == "" {
				return "", attempt.Errorf(taskfile.ClassTransient, "site %s answered with empty text", d.siteName)
			}
			d.step("answer finished", "chars", utf8.RuneCountInString(ans), "continues", continues, "after", now.Sub(sent).Round(time.Millisecond))
			return ans, nil
		case !st.Busy && sawBusy && !fresh && now.Sub(busyGone) > d.t.Quiet:
			return "", attempt.Errorf(taskfile.ClassTransient, "site %s: the generation ended without an answer", d.siteName)
		}
		select {
		case <-ctx.Done():
			return "", d.fail(ctx, "waiting for the answer: %w", context.Cause(ctx))
		case <-tick.C:
		}
	}
}
