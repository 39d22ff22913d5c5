package browser

import (
	"context"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// pageState is what one look at the page sees.
type pageState struct {
	Ready       bool   `json:"ready"` // document.readyState is complete
	LoggedOut   bool   `json:"loggedOut"`
	Input       bool   `json:"input"`
	InputShadow int    `json:"inputShadow"`
	InputBad    string `json:"inputBad"`
	SendShadow  int    `json:"sendShadow"`
	Busy        bool   `json:"busy"`
	Count       int    `json:"count"`
	Last        string `json:"last"`
	Error       string `json:"error"`
	Limited     string `json:"limited"`
	Continue    bool   `json:"continue"`
	InputText   string `json:"inputText"`
	// LastID tells answer elements apart: the last one's serial, given
	// the first time a look sees it (a page that replaces the element
	// shows a new serial for the same count).
	LastID int `json:"lastId"`
	// DoneLast: a visible match of the site's `done` selector is inside
	// or after the last answer element, so that answer is finished.
	DoneLast bool `json:"doneLast"`
	// ErrTurn: the last answer is the site's error turn (`errorTurn`).
	ErrTurn bool `json:"errTurn"`
	// Challenge names the challenge the page shows (challenge.go), "" for none.
	Challenge string `json:"challenge"`
}

func (d *driver) stateExpr() string {
	s := d.site
	return `(() => {` + helpers + `
const answers = qa(` + js(s.Answer) + `).els;
const last = answers.length ? answers[answers.length - 1] : null;
const input = qa(` + js(s.Input) + `);
const SID = Symbol.for('spoolgate.answerId'), SN = Symbol.for('spoolgate.answerN');
if (last && !last[SID]) last[SID] = (window[SN] = (window[SN] || 0) + 1);
const et = ` + js(d.rs.errorTurn) + `;
let errTurn = false;
if (last && et) { try { errTurn = last.matches(et) || !!last.querySelector(et); } catch (e) {} }
const send = qa(` + js(s.Send) + `);
return {
  ready: document.readyState === 'complete',
  loggedOut: vis(q(` + js(s.LoggedOut) + `)),
  input: input.els.length > 0,
  inputShadow: input.shadow,
  inputBad: input.bad || '',
  sendShadow: send.shadow,
  busy: vis(q(` + js(s.Busy) + `)),
  count: answers.length,
  last: last ? (last.innerText ?? last.textContent ?? '') : '',
  error: visText(q(` + js(s.Error) + `)),
  limited: visText(qlast(` + js(s.Limited) + `)),
  continue: vis(qlast(` + js(s.Continue) + `)),
  inputText: input.els.length ? fieldText(editable(input.els[0])) : '',
  lastId: last ? last[SID] : 0,
  doneLast: !!last && qa(` + js(d.rs.done) + `).els.some((e) => vis(e) && (last.contains(e) || !!(last.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING))),
  errTurn,
  challenge: ` + challengeJS(s.Challenge) + `,
};
})()`
}

func (d *driver) look(ctx context.Context) (pageState, error) {
	st, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](d.stateExpr()))
	if err == nil && d.watch != nil {
		d.watch(ctx, st)
	}
	return st, err
}

// excerpt is up to 300 characters of the page's visible text around the
// input (the nearest ancestor of the input that holds that much text, or
// the whole page), whitespace folded: what an operator would have seen.
func (d *driver) excerpt(ctx context.Context) string {
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {`+helpers+`
let el = q(`+js(d.site.Input)+`) || document.body;
const text = (e) => (e.innerText || e.textContent || '').replace(/\s+/g, ' ').trim();
while (el && el !== document.body && text(el).length < 300) el = el.parentNode && el.parentNode.host ? el.parentNode.host : el.parentElement;
return text(el || document.body).slice(0, 300);
})()`))
	if err != nil {
		return "(could not read the page: " + err.Error() + ")"
	}
	return s
}

// regenerateJS matches the label of a site's Regenerate or Retry
// button, which no click of the driver may ever press.
const regenerateJS = `/\b(regenerat\w*|retry|try again)\b|重新生成|重试|再試行|再生成/i`

type point struct {
	Regenerate string  `json:"regenerate"` // the label, when the element is a Regenerate/Retry button
	Found      bool    `json:"found"`
	X          float64 `json:"x"`
	Y          float64 `json:"y"`
	W          float64 `json:"w"`
}

// click presses the first element sel matches; see clickAt.
func (d *driver) click(ctx context.Context, sel string) (bool, error) {
	return d.clickAt(ctx, sel, false)
}

// clickAt presses the element's center (the last match when last) with
// real mouse events, which pages cannot tell from a person's click; an
// element with no box (hidden, zero size) is clicked from the page instead.
func (d *driver) clickAt(ctx context.Context, sel string, last bool) (bool, error) {
	pick := "q"
	if last {
		pick = "qlast"
	}
	p, err := chromedp.Run(ctx, chromedp.Evaluate[point](`(() => {`+helpers+`
const el = `+pick+`(`+js(sel)+`);
if (!el) return {found: false};
const label = [el.innerText, el.getAttribute('aria-label'), el.getAttribute('title'), el.getAttribute('data-testid')].join(' ');
if (`+regenerateJS+`.test(label)) return {found: true, regenerate: label.replace(/\s+/g, ' ').trim()};
el.scrollIntoView({block: 'center', inline: 'center'});
const r = el.getBoundingClientRect();
return {found: true, x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width * r.height};
})()`))
	if err != nil || !p.Found {
		return false, err
	}
	if p.Regenerate != "" {
		// A retry never asks the site for another generation of the
		// same message: that is a second send the account pays for.
		return true, attempt.Errorf(taskfile.ClassEnvironment, "site %s: selector %q matches the site's own Regenerate/Retry button (%q); spoolgate never clicks it: point the key at another element", d.siteName, sel, p.Regenerate)
	}
	if p.W == 0 {
		return true, d.jsClick(ctx, sel, pick)
	}
	return true, chromedp.Do(ctx, chromedp.MouseClickXY(p.X, p.Y))
}

func (d *driver) jsClick(ctx context.Context, sel, pick string) error {
	return chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => {`+helpers+`const el = `+pick+`(`+js(sel)+`); if (el) el.click(); })()`))
}

// A challenge is a page that wants a person: Cloudflare's "Just a moment..."
// interstitial, a captcha, a slider, a Chinese site's 安全验证. It is not the
// task's fault and not the page's selectors': the account is held (the
// task goes back to pending unspent) until an operator clears it by hand.
// Nothing here ever tries to solve one.

// challengeDefaults are the built-in challenges: each a name and a
// selector whose visible match is one. Invisible widgets (reCAPTCHA v3's
// badge, an invisible hCaptcha) are left out: many signed-in pages carry
// them and they ask nothing of a person.
var challengeDefaults = []struct{ Name, Sel string }{
	{"Cloudflare challenge", `iframe[src*="challenges.cloudflare.com"], #challenge-form, #challenge-stage, #cf-challenge-running`},
	{"hCaptcha", `iframe[src*="hcaptcha.com"]:not([src*="size=invisible"]), iframe[data-hcaptcha-widget-id]:not([src*="size=invisible"])`},
	{"reCAPTCHA", `iframe[src*="/recaptcha/"]:not([src*="size=invisible"]), iframe[title="reCAPTCHA"]:not([src*="size=invisible"])`},
	{"GeeTest slider", `[class^="geetest_"], [class*=" geetest_"]`},
}

// challengeTexts are the words of a challenge page's title or text, read
// only when the page shows no chat input: an answer or a prompt may well
// say them on a chat page.
var challengeTexts = []string{"安全验证", "人机验证", "Verify you are human", "Just a moment..."}

// challengeJS is a page expression (inside stateExpr, after helpers, with
// input bound to the input's matches) whose value names the challenge the
// page shows, "" for none: the site's `challenge` key first, then the
// defaults; a title or text of challengeTexts only while no input shows.
func challengeJS(site string) string {
	return `(() => {
  const own = ` + js(site) + `;
  if (own && qa(own).els.some(vis)) return 'the site\'s challenge (' + own + ')';
  for (const [name, sel] of ` + js(challengePairs()) + `) {
    if (qa(sel).els.some(vis)) return name;
  }
  if (input.els.length) return '';
  const title = document.title || '';
  const body = document.body ? (document.body.innerText || '').slice(0, 4000) : '';
  for (const w of ` + js(challengeTexts) + `) {
    const lw = w.toLowerCase();
    if (title.toLowerCase().includes(lw)) return 'page titled ' + JSON.stringify(title.trim().slice(0, 80));
    if (body.toLowerCase().includes(lw)) return 'page text says ' + JSON.stringify(w);
  }
  return '';
})()`
}

func challengePairs() [][2]string {
	out := make([][2]string, len(challengeDefaults))
	for i, c := range challengeDefaults {
		out[i] = [2]string{c.Name, c.Sel}
	}
	return out
}

// signInHold is the account failure of a page that wants a person: it
// carries the hold (kind signedOut or challenge, no until-time) for the
// lane to write; the executor adds the page's screenshot.
func (d *driver) signInHold(kind, what, msg string) error {
	hold := &taskfile.Hold{Kind: kind, Site: d.siteName, Reason: taskfile.OneLine(what), Since: time.Now()}
	d.step("account held", "kind", kind, "reason", hold.Reason)
	return &attempt.TaskError{Class: taskfile.ClassAccount, Hold: hold, Err: attempt.Errorf(taskfile.ClassAccount, "%s", msg)}
}

// challenged is the error of a page that shows a challenge.
func (d *driver) challenged(what string) error {
	return d.signInHold(taskfile.HoldChallenge, what,
		"site "+d.siteName+" shows a challenge ("+what+"): the account is held until an operator clears it (spoolgate login "+d.siteName+", or spoolgate resume --account)")
}
