package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/spool"
)

// The driver talks to the page only through Runtime.evaluate of small
// expressions polled with a deadline, Input.insertText and mouse events at
// coordinates. The issue reported chromedp's node-tracking actions (Click,
// WaitVisible) hanging against a page whose script changes the DOM. Checked
// here against the stand-in while its answer streams (chromedp v0.23.1,
// Chromium 156): they did not hang (WaitVisible 20-35 ms, Click 7-25 ms).
// The driver still avoids them: they depend on the DOM domain's node
// tree, which a busy page rebuilds under them, while one evaluate per look
// is a single round-trip under the caller's deadline, sees exactly what
// the page's own script sees, and works the same for textarea and
// contenteditable inputs.

// Timings is how long each phase of a chat may take.
type Timings struct {
	PageLoad   time.Duration // navigation until the input or loggedOut shows
	FirstToken time.Duration // send until busy or an answer shows
	Quiet      time.Duration // the answer must hold still this long once busy is gone
	Poll       time.Duration // how often the page is looked at
}

func (t Timings) withDefaults() Timings {
	if t.PageLoad <= 0 {
		t.PageLoad = 60 * time.Second
	}
	if t.FirstToken <= 0 {
		t.FirstToken = 3 * time.Minute
	}
	if t.Quiet <= 0 {
		t.Quiet = time.Second
	}
	if t.Poll <= 0 {
		t.Poll = 50 * time.Millisecond
	}
	return t
}

// driver drives one chat on a page described only by a spool.SiteConfig.
type driver struct {
	site     spool.SiteConfig
	siteName string
	t        Timings
	log      *slog.Logger
	beat     func()
	stage    func(string)
}

// pageState is what one look at the page sees.
type pageState struct {
	LoggedOut bool   `json:"loggedOut"`
	Input     bool   `json:"input"`
	Busy      bool   `json:"busy"`
	Count     int    `json:"count"`
	Last      string `json:"last"`
	Error     string `json:"error"`
	InputText string `json:"inputText"`
}

// js quotes v as a JavaScript literal.
func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// helpers is a prelude of small page functions shared by the expressions.
const helpers = `
const q = (s) => { if (!s) return null; try { return document.querySelector(s); } catch (e) { return null; } };
const vis = (el) => !!el && !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length) && getComputedStyle(el).visibility !== 'hidden';
const textOf = (el) => !el ? '' : ('value' in el && typeof el.value === 'string') ? el.value : (el.innerText ?? el.textContent ?? '');
`

func (d *driver) stateExpr() string {
	s := d.site
	return `(() => {` + helpers + `
const all = ` + js(s.Answer) + ` ? document.querySelectorAll(` + js(s.Answer) + `) : [];
const last = all.length ? all[all.length - 1] : null;
const err = q(` + js(s.Error) + `);
return {
  loggedOut: vis(q(` + js(s.LoggedOut) + `)),
  input: !!q(` + js(s.Input) + `),
  busy: vis(q(` + js(s.Busy) + `)),
  count: all.length,
  last: last ? (last.innerText ?? last.textContent ?? '') : '',
  error: vis(err) ? (err.innerText || err.textContent || '').trim() : '',
  inputText: textOf(q(` + js(s.Input) + `)),
};
})()`
}

func (d *driver) look(ctx context.Context) (pageState, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[pageState](d.stateExpr()))
}

// chat runs one exchange and returns the answer text.
func (d *driver) chat(ctx context.Context, model *spool.ModelConfig, task *spool.Task) (string, error) {
	d.t = d.t.withDefaults()

	d.stage("opening page")
	lctx, cancel := context.WithTimeout(ctx, d.t.PageLoad)
	err := chromedp.Do(lctx, chromedp.Navigate(d.site.URL))
	cancel()
	if err != nil {
		return "", d.fail(ctx, "open %s: %w", d.site.URL, err)
	}
	st, err := d.waitFor(ctx, d.t.PageLoad, "the page's input or sign-in link", func(s pageState) bool { return s.LoggedOut || s.Input })
	if err != nil {
		return "", err
	}
	if st.LoggedOut {
		return "", lanes.Errorf(spool.ClassAccount, "site %s shows its signed-out page: run `spoolgate login %s` to sign the web profile in", d.siteName, d.siteName)
	}
	d.beat()

	if d.site.NewChat != "" {
		d.stage("starting a new chat")
		if found, err := d.click(ctx, d.site.NewChat); err != nil {
			return "", d.fail(ctx, "click newChat: %w", err)
		} else if !found {
			d.log.Warn("driver: newChat selector matches nothing; continuing in the current chat", "selector", d.site.NewChat)
		}
	}

	d.stage("typing the message")
	text := task.Content
	switch {
	case model.NeedEmptyPrompt:
		// Only the user content goes out: no task prompt, and no default
		// instructions the page pre-filled (trap 2 of the field report).
		if d.site.PromptInput != "" {
			if _, err := d.setText(ctx, d.site.PromptInput, ""); err != nil {
				return "", d.fail(ctx, "clear promptInput: %w", err)
			}
		}
		if task.Prompt != "" {
			d.log.Info("driver: model has needEmptyPrompt; the task's prompt is not sent")
		}
	case task.Prompt != "" && d.site.PromptInput != "":
		found, err := d.setText(ctx, d.site.PromptInput, task.Prompt)
		if err != nil {
			return "", d.fail(ctx, "type prompt: %w", err)
		}
		if !found {
			return "", lanes.Errorf(spool.ClassPermanent, "site %s: promptInput %q matches nothing", d.siteName, d.site.PromptInput)
		}
	case task.Prompt != "":
		text = task.Prompt + "\n\n" + task.Content
	}
	if found, err := d.setText(ctx, d.site.Input, text); err != nil {
		return "", d.fail(ctx, "type content: %w", err)
	} else if !found {
		return "", lanes.Errorf(spool.ClassPermanent, "site %s: input %q matches nothing", d.siteName, d.site.Input)
	}

	before, err := d.look(ctx)
	if err != nil {
		return "", d.fail(ctx, "read page: %w", err)
	}
	d.stage("sending")
	if found, err := d.click(ctx, d.site.Send); err != nil {
		return "", d.fail(ctx, "click send: %w", err)
	} else if !found {
		return "", lanes.Errorf(spool.ClassPermanent, "site %s: send %q matches nothing", d.siteName, d.site.Send)
	}
	d.beat()
	return d.awaitAnswer(ctx, before)
}

// awaitAnswer waits until busy has appeared and gone (or never appeared
// but a new answer exists) and the last answer has held still for the
// quiet period, and returns its text.
func (d *driver) awaitAnswer(ctx context.Context, before pageState) (string, error) {
	d.stage("waiting for the first token")
	sent := time.Now()
	var (
		sawBusy, started, nudged bool
		last                     string
		stillSince, busyGone     time.Time
	)
	tick := time.NewTicker(d.t.Poll)
	defer tick.Stop()
	for {
		st, err := d.look(ctx)
		if err != nil {
			return "", d.fail(ctx, "read page: %w", err)
		}
		if st.Error != "" {
			return "", lanes.Errorf(spool.ClassTransient, "site %s shows an error: %s", d.siteName, st.Error)
		}
		if st.LoggedOut {
			return "", lanes.Errorf(spool.ClassAccount, "site %s signed out during the answer: run `spoolgate login %s`", d.siteName, d.siteName)
		}
		sawBusy = sawBusy || st.Busy
		fresh := st.Count > before.Count
		if !started && (st.Busy || fresh) {
			started = true
			d.stage("waiting for the answer")
		}
		if !started && !nudged && time.Since(sent) > 2*time.Second && st.InputText != "" {
			// The trusted click did not take (an overlay, a button that
			// wants a real element click): press it from the page once.
			nudged = true
			d.log.Warn("driver: send did not start a generation; clicking it from the page")
			if err := d.jsClick(ctx, d.site.Send); err != nil {
				return "", d.fail(ctx, "click send: %w", err)
			}
		}
		if !started && time.Since(sent) > d.t.FirstToken {
			return "", lanes.Errorf(spool.ClassTransient, "site %s: no answer started within %s of sending", d.siteName, d.t.FirstToken)
		}
		if fresh && (stillSince.IsZero() || st.Last != last) {
			last, stillSince = st.Last, time.Now()
			d.beat()
		}
		switch {
		case st.Busy:
			busyGone = time.Time{}
		case sawBusy && busyGone.IsZero():
			busyGone = time.Now()
		}
		if !st.Busy && fresh && time.Since(stillSince) >= d.t.Quiet {
			ans := strings.TrimSpace(st.Last)
			if ans == "" {
				return "", lanes.Errorf(spool.ClassTransient, "site %s answered with empty text", d.siteName)
			}
			return ans, nil
		}
		if !st.Busy && sawBusy && !fresh && time.Since(busyGone) > d.t.Quiet {
			return "", lanes.Errorf(spool.ClassTransient, "site %s: the generation ended without an answer", d.siteName)
		}
		select {
		case <-ctx.Done():
			return "", d.fail(ctx, "waiting for the answer: %w", context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// waitFor polls the page until ok holds or limit passes.
func (d *driver) waitFor(ctx context.Context, limit time.Duration, what string, ok func(pageState) bool) (pageState, error) {
	deadline := time.Now().Add(limit)
	for {
		st, err := d.look(ctx)
		if err == nil && ok(st) {
			return st, nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return st, d.fail(ctx, "waiting for %s: %w", what, err)
			}
			return st, lanes.Errorf(spool.ClassTransient, "site %s: %s did not show within %s", d.siteName, what, limit)
		}
		select {
		case <-ctx.Done():
			return st, d.fail(ctx, "waiting for %s: %w", what, context.Cause(ctx))
		case <-time.After(d.t.Poll):
		}
	}
}

type point struct {
	Found bool    `json:"found"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	W     float64 `json:"w"`
}

// click presses the element's center with real mouse events, which pages
// cannot tell from a person's click; an element with no box (hidden, zero
// size) is clicked from the page instead.
func (d *driver) click(ctx context.Context, sel string) (bool, error) {
	p, err := chromedp.Run(ctx, chromedp.Evaluate[point](`(() => {`+helpers+`
const el = q(`+js(sel)+`);
if (!el) return {found: false};
el.scrollIntoView({block: 'center', inline: 'center'});
const r = el.getBoundingClientRect();
return {found: true, x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width * r.height};
})()`))
	if err != nil || !p.Found {
		return false, err
	}
	if p.W == 0 {
		return true, d.jsClick(ctx, sel)
	}
	return true, chromedp.Do(ctx, chromedp.MouseClickXY(p.X, p.Y))
}

func (d *driver) jsClick(ctx context.Context, sel string) error {
	return chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => {`+helpers+`const el = q(`+js(sel)+`); if (el) el.click(); })()`))
}

// setText replaces the text of a field (textarea, input or contenteditable)
// with v: it focuses the field, selects its content and inserts v as typed
// text (Input.insertText), so the page's own input handlers run. It falls
// back to setting the value directly when the insert did not take.
func (d *driver) setText(ctx context.Context, sel, v string) (bool, error) {
	found, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {`+helpers+`
const el = q(`+js(sel)+`);
if (!el) return false;
el.focus();
if (typeof el.select === 'function') el.select();
else { const r = document.createRange(); r.selectNodeContents(el); const s = getSelection(); s.removeAllRanges(); s.addRange(r); }
return true;
})()`))
	if err != nil || !found {
		return found, err
	}
	if v == "" {
		err = chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.execCommand('delete')`))
	} else {
		_, err = chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: v})
	}
	if err != nil {
		return true, err
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {`+helpers+`return textOf(q(`+js(sel)+`)); })()`))
	if err != nil {
		return true, err
	}
	if strings.TrimSpace(got) == strings.TrimSpace(v) {
		return true, nil
	}
	d.log.Warn("driver: typed text did not land; setting the field directly", "selector", sel)
	return true, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => {`+helpers+`
const el = q(`+js(sel)+`);
if (!el) return;
if ('value' in el) {
  const set = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value')?.set;
  if (set) set.call(el, `+js(v)+`); else el.value = `+js(v)+`;
} else { el.textContent = `+js(v)+`; }
el.dispatchEvent(new Event('input', {bubbles: true}));
})()`))
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
