package browser

import (
	"context"
	"errors"
	"fmt"
	stdhtml "html"
	"io/fs"
	"log/slog"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/spoolgate/spoolgate/lanes/attempt"
)

// keepArtefacts is how many attempts of a task keep their screenshot and
// page: the last three.
const keepArtefacts = 3

// artefactTimeout bounds taking the screenshot and the page's HTML of a
// failed attempt (its own context may be gone: a timeout).
const artefactTimeout = 10 * time.Second

// artefacts are the files saved for a failed attempt, relative to the
// spool (how an operator on any machine that sees the share finds them).
type artefacts struct{ png, html string }

func (a artefacts) String() string {
	switch {
	case a.png != "" && a.html != "":
		return "screenshot " + a.png + ", page " + a.html
	case a.png != "":
		return "screenshot " + a.png
	case a.html != "":
		return "page " + a.html
	}
	return ""
}

// saveArtefacts saves what the tab shows, as <lane>/logs/TASKID.N.png and
// TASKID.N.html (N = attempt; the HTML holds the page's open shadow roots
// as declarative <template shadowrootmode> elements), and removes those of
// attempts older than the last three. The HTML is the document as
// displayed, without the page's secrets (pageSecretsJS, maskSecrets):
// the share is read by every colleague, the account only by spoolgate.
// The files are written like task logs: no folder on the way followed
// through a symlink. Whatever cannot be saved is logged and left out.
func saveArtefacts(tab context.Context, job *attempt.Job, id string, n int, known []string, log *slog.Logger) artefacts {
	ctx, cancel := context.WithTimeout(tab, artefactTimeout)
	defer cancel()
	base := id + "." + strconv.Itoa(n)
	var a artefacts
	if png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err != nil {
		log.Warn("driver: no screenshot of the failed attempt", "err", err)
	} else if a.png, err = job.SaveLogFile(base+".png", png); err != nil {
		log.Warn("driver: cannot save the screenshot", "err", err)
	}
	if html, err := displayedPage(ctx, known); err != nil {
		log.Warn("driver: no HTML of the failed attempt", "err", err)
	} else if a.html, err = job.SaveLogFile(base+".html", []byte(html)); err != nil {
		log.Warn("driver: cannot save the page's HTML", "err", err)
	}
	for old := n - keepArtefacts; old >= 1; old-- {
		b := id + "." + strconv.Itoa(old)
		e1 := job.RemoveLogFile(b + ".png")
		e2 := job.RemoveLogFile(b + ".html")
		if errors.Is(e1, fs.ErrNotExist) && errors.Is(e2, fs.ErrNotExist) {
			break // older ones went with it
		}
	}
	if s := a.String(); s != "" {
		log.Info(fmt.Sprintf("driver: saved the failed attempt's %s", s))
	}
	return a
}

// displayedJS serialises the document as displayed, without what a page
// keeps for itself rather than shows: scripts (inline boot state, JSON
// islands), <meta> but charset and viewport (CSRF tokens), hidden inputs
// and every form value, data-* and event attributes, nonces, comments,
// srcdoc frames. It works on a parsed copy, never on the live page, and
// reaches into declarative shadow roots (template contents). It returns
// the HTML and the values the page stores (cookies readable by script,
// localStorage, sessionStorage), for maskSecrets.
const displayedJS = `(() => {%s
const doc = document.documentElement;
const raw = typeof doc.getHTML === 'function' ? doc.getHTML({serializableShadowRoots: true, shadowRoots: openRoots()}) : doc.outerHTML;
const copy = new DOMParser().parseFromString('<!doctype html>' + raw, 'text/html');
const keepMeta = (m) => m.hasAttribute('charset') || /^(viewport|color-scheme)$/i.test(m.getAttribute('name') || '');
const clean = (root) => {
  const walker = (root.ownerDocument || root).createTreeWalker(root, NodeFilter.SHOW_COMMENT);
  const comments = [];
  while (walker.nextNode()) comments.push(walker.currentNode);
  for (const c of comments) c.remove();
  for (const el of [...root.querySelectorAll('*')]) {
    const tag = el.tagName.toLowerCase();
    if (tag === 'script' || tag === 'noscript' || tag === 'object' || tag === 'embed' || (tag === 'meta' && !keepMeta(el)) ||
        (tag === 'input' && (el.getAttribute('type') || '').toLowerCase() === 'hidden')) { el.remove(); continue; }
    for (const a of [...el.attributes]) {
      const n = a.name.toLowerCase();
      if (n.startsWith('data-') || n.startsWith('on') || n === 'nonce' || n === 'integrity' || n === 'srcdoc' || n === 'value' || n === 'ping' ||
          (n === 'content' && tag !== 'meta') || n === 'autocomplete') el.removeAttribute(a.name);
    }
    if (tag === 'textarea') el.textContent = '';
    if (tag === 'template' && el.content) clean(el.content);
  }
};
clean(copy.documentElement);
const stored = [];
try { for (let i = 0; i < localStorage.length; i++) stored.push(localStorage.getItem(localStorage.key(i)) || ''); } catch (e) {}
try { for (let i = 0; i < sessionStorage.length; i++) stored.push(sessionStorage.getItem(sessionStorage.key(i)) || ''); } catch (e) {}
for (const c of (document.cookie || '').split(';')) { const i = c.indexOf('='); if (i > 0) stored.push(c.slice(i + 1).trim()); }
return {html: '<!doctype html>\n' + copy.documentElement.outerHTML, stored};
})()`

type displayed struct {
	HTML   string   `json:"html"`
	Stored []string `json:"stored"`
}

// displayedPage is the tab's document as displayed (displayedJS), with
// every value of the account's cookies (HttpOnly ones included, read
// through the browser), of the page's storage and of known (the
// config's keys and tokens) masked.
func displayedPage(ctx context.Context, known []string) (string, error) {
	d, err := chromedp.Run(ctx, chromedp.Evaluate[displayed](fmt.Sprintf(displayedJS, helpers)))
	if err != nil {
		return "", err
	}
	secrets := append(append([]string{}, known...), d.Stored...)
	if cs, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{}); err == nil {
		for _, c := range cs.Cookies {
			secrets = append(secrets, c.Value)
		}
	}
	return maskSecrets(d.HTML, secrets), nil
}

// minSecret is the shortest value masked: shorter ones (a cookie "1", a
// flag "true") are no secret and would mask the page's own words.
const minSecret = 8

// maskSecrets replaces in html every occurrence of each secret (as
// written, URL-escaped and HTML-escaped) with a mask of its length class,
// longest first so one that contains another goes whole.
func maskSecrets(html string, secrets []string) string {
	var forms []string
	seen := map[string]bool{}
	for _, s := range secrets {
		if len(s) < minSecret {
			continue
		}
		for _, f := range []string{s, url.QueryEscape(s), url.PathEscape(s), stdhtml.EscapeString(s)} {
			if !seen[f] {
				seen[f] = true
				forms = append(forms, f)
			}
		}
	}
	sort.Slice(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	for _, f := range forms {
		html = strings.ReplaceAll(html, f, "[masked]")
	}
	return html
}
