package browser

import (
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

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
