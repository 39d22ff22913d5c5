// Package generated fetches the files a chat page's answer generated (its
// images, its download links, what the site's `artifacts:` selector
// names, the image and file links a streamed answer names) from inside
// the signed-in page: fetch() in the page, so the bytes are the site's
// own, never a screenshot. Which addresses are fetched, and with whose
// session, is lanes/artifacts' Policy (issue 49): only where the
// site's artifactsFrom says its generated files live is fetched with the
// account's cookies, never an address the task's own text names; other
// origins are fetched with no credentials; blob: and data: addresses
// (made by the page) always. Everything else stays a plain link. The issue spells these files
// "artifacts"; browser/artefacts.go's failure artefacts (a failed
// attempt's screenshot and page) are another thing.
package generated

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/lanes/artifacts"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Ref is a generated file the answer names.
type Ref struct {
	Raw   string `json:"raw"` // the address as the page or the text wrote it
	URL   string `json:"url"` // absolute
	Title string `json:"title"`
	Hint  string `json:"hint"` // a download's file name
	Image bool   `json:"image"`
}

// Spec is what Keep needs of the site and the config.
type Spec struct {
	// Prelude defines the page helpers (qlast: the last match of a
	// selector, into open shadow roots) the listing uses.
	Prelude  string
	Answer   string // the site's answer selector
	Extra    string // the site's artifacts: selector, or ""
	Limits   artifacts.Limits
	Optional bool // artifacts.optional: a failure is logged, not fatal
	// Policy says which addresses are fetched, with whose session, and
	// which bytes are kept (the site's artifactsFrom, artifacts.types and
	// the addresses of the task's own text).
	Policy artifacts.Policy
	Log    *slog.Logger
}

// ErrFetch is a generated file the page could not fetch.
var ErrFetch = errors.New("cannot fetch a generated file through the page")

// Keep lists the answer's generated files, fetches each through the page
// and keeps them through job (lanes/artifacts.Keep): it returns the
// answer's text pointing at the saved files and the task file's list. A
// failure is an environment TaskError naming the file, unless
// spec.Optional (then the text comes back as it was, with no files).
func Keep(ctx context.Context, job *attempt.Job, spec Spec, text string) (string, []taskfile.Artifact, error) {
	refs, pageURL, err := list(ctx, spec)
	if err != nil {
		return soft(spec, text, fmt.Errorf("%w: list the answer's files: %v", ErrFetch, err))
	}
	refs = merge(refs, FromText(text, pageURL))
	if len(refs) == 0 {
		return text, nil, nil
	}
	lim := spec.Limits
	if lim.MaxFile <= 0 {
		lim.MaxFile = artifacts.DefaultMaxFile
	}
	var files []artifacts.File
	for i, r := range refs {
		d := spec.Policy.Decide(pageURL, r.URL)
		if d.Route == artifacts.Skip {
			spec.logRefused(r, d.Why)
			continue
		}
		got, err := fetchAs(ctx, r.URL, d.Route, lim.MaxFile)
		if err != nil {
			return soft(spec, text, fmt.Errorf("generated file %d of %d (%s): %w", i+1, len(refs), describe(r), err))
		}
		if d.Route == artifacts.Session && got.Final != "" && got.Final != r.URL {
			// A redirect: where it ended must be the site's too.
			if fd := spec.Policy.Decide(pageURL, got.Final); fd.Route != artifacts.Session {
				spec.logRefused(r, "redirected to "+taskfile.Clip(got.Final)+": "+fd.Why)
				continue
			} else {
				d.Exact = fd.Exact
			}
		}
		data := got.Data
		hint := r.Hint
		if hint == "" && !strings.HasPrefix(r.URL, "data:") {
			if u, err := url.Parse(r.URL); err == nil {
				hint = path.Base(u.Path)
			}
		}
		if err := spec.Policy.Admit(d, r.Image, data, hint, got.Type); err != nil {
			spec.logRefused(r, err.Error())
			continue
		}
		raws := []string{r.Raw, r.URL}
		files = append(files, artifacts.File{Refs: raws, Hint: hint, Title: r.Title, Image: r.Image, Data: data})
	}
	out, list, err := job.KeepArtifacts(text, files, lim)
	if err != nil {
		return soft(spec, text, err)
	}
	if spec.Log != nil {
		spec.Log.Info("generated files kept", "files", len(list))
	}
	return out, list, nil
}

// logRefused logs a reference that is not kept: it stays a plain link.
func (spec Spec) logRefused(r Ref, why string) {
	if spec.Log != nil {
		spec.Log.Warn("generated file not fetched: it stays a link", "file", describe(r), "why", why)
	}
}

// soft is err as the attempt's environment failure, or, with
// artifacts.optional, logged and dropped.
func soft(spec Spec, text string, err error) (string, []taskfile.Artifact, error) {
	if spec.Optional {
		if spec.Log != nil {
			spec.Log.Warn("generated files left out (artifacts.optional)", "err", err)
		}
		return text, nil, nil
	}
	return text, nil, attempt.Errorf(taskfile.ClassEnvironment, "%w", err)
}

func describe(r Ref) string {
	u := r.URL
	if strings.HasPrefix(u, "data:") {
		u = "a data: address"
	}
	if r.Title != "" {
		return fmt.Sprintf("%q, %s", taskfile.Clip(r.Title), taskfile.Clip(u))
	}
	return taskfile.Clip(u)
}

// merge appends to a the refs of b whose address a does not have.
func merge(a, b []Ref) []Ref {
	seen := map[string]bool{}
	for _, r := range a {
		seen[r.URL] = true
	}
	for _, r := range b {
		if !seen[r.URL] {
			seen[r.URL] = true
			a = append(a, r)
		}
	}
	return a
}

// fileExt are the extensions that make a link in an answer a generated
// file (on the page's own origin, or a blob: or data: address).
var fileExt = regexp.MustCompile(`(?i)\.(png|jpe?g|gif|webp|svg|bmp|pdf|csv|tsv|xlsx?|docx?|pptx?|zip|txt|json|md|mp3|wav|mp4|webm)$`)

var mdLink = regexp.MustCompile(`(!?)\[([^\]\n]*)\]\(\s*<?([^\s()<>]+)>?(?:\s+"[^"\n]*")?\s*\)`)

// FromText lists the files a Markdown answer names (a streamed answer's
// text, which the page's elements may not show the same way): every
// image, and every link to a file on the page's own origin (or blob:,
// data:).
func FromText(text, pageURL string) []Ref {
	base, _ := url.Parse(pageURL)
	var out []Ref
	for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
		img, title, raw := m[1] == "!", m[2], m[3]
		abs := raw
		if base != nil {
			if u, err := base.Parse(raw); err == nil {
				abs = u.String()
			}
		}
		if !img && !isFile(abs, base) {
			continue
		}
		out = append(out, Ref{Raw: raw, URL: abs, Title: title, Image: img})
	}
	return out
}

func isFile(abs string, base *url.URL) bool {
	if strings.HasPrefix(abs, "blob:") || strings.HasPrefix(abs, "data:") {
		return true
	}
	u, err := url.Parse(abs)
	if err != nil || base == nil || u.Scheme != base.Scheme || u.Host != base.Host {
		return false
	}
	return fileExt.MatchString(u.Path)
}

// listJS lists the last answer's files: its images (not decorations: an
// image hidden, aria-hidden or presentation, 48 px or less, or inside an
// element of the answer whose class says avatar, icon, emoji or logo), its a[download] links, links to files on the page's
// origin, and what the site's artifacts: selector matches inside it (an
// element with src, href or data-url).
const listJS = `(() => {%s
const ans = qlast(%s);
const out = [];
if (!ans) return {page: location.href, refs: out};
const extOK = (u) => { try { const x = new URL(u, location.href); return x.protocol === 'blob:' || x.protocol === 'data:' || (x.origin === location.origin && %s.test(x.pathname)); } catch (e) { return false; } };
const add = (el, raw, abs, image) => { if (!raw || abs.startsWith('javascript:')) return; out.push({raw, url: abs, image, title: (image ? el.getAttribute('alt') : (el.innerText || el.textContent || '')).replace(/\s+/g, ' ').trim(), hint: el.getAttribute('download') || ''}); };
const deco = (img) => {
  if (img.getAttribute('aria-hidden') === 'true' || img.getAttribute('role') === 'presentation') return true;
  const r = img.getBoundingClientRect();
  if (!r.width && !r.height && !img.getClientRects().length) return true; // not shown
  if (r.width && r.height && r.width <= 48 && r.height <= 48) return true; // an icon, an avatar, an emoji
  const d = img.closest('[class*="avatar" i], [class*="icon" i], [class*="emoji" i], [class*="logo" i]');
  return !!d && ans.contains(d);
};
for (const img of ans.querySelectorAll('img')) {
  if (!deco(img)) add(img, img.getAttribute('src'), img.src, true);
}
for (const a of ans.querySelectorAll('a[href]')) {
  if (a.hasAttribute('download') || extOK(a.href)) add(a, a.getAttribute('href'), a.href, false);
}
const extra = %s;
if (extra) for (const el of ans.querySelectorAll(extra)) {
  const raw = el.getAttribute('src') || el.getAttribute('href') || el.getAttribute('data-url') || '';
  if (raw) add(el, raw, new URL(raw, location.href).href, el.tagName === 'IMG');
}
const seen = new Set();
return {page: location.href, refs: out.filter((r) => !seen.has(r.url) && seen.add(r.url))};
})()`

type listed struct {
	Page string `json:"page"`
	Refs []Ref  `json:"refs"`
}

// List lists the files the last answer (answer, a selector, with extra
// the site's artifacts: selector) shows, and the page's address: what
// Keep would consider, before any rule of the policy.
func List(ctx context.Context, prelude, answer, extra string) ([]Ref, string, error) {
	return list(ctx, Spec{Prelude: prelude, Answer: answer, Extra: extra})
}

func list(ctx context.Context, spec Spec) ([]Ref, string, error) {
	re, _ := json.Marshal(fileExt.String())
	ans, _ := json.Marshal(spec.Answer)
	extra, _ := json.Marshal(spec.Extra)
	expr := fmt.Sprintf(listJS, spec.Prelude, ans, "new RegExp("+string(re)+")", extra)
	l, err := chromedp.Run(ctx, chromedp.Evaluate[listed](expr))
	return l.Refs, l.Page, err
}

// fetchJS fetches one address with the page's own cookies and returns it
// as base64, or why not; it stops reading past max bytes.
const fetchJS = `(async () => {
const u = %s, max = %d, cred = %s;
let r;
try { r = await fetch(u, {credentials: cred, cache: 'no-store', referrerPolicy: 'no-referrer'}); } catch (e) { return {err: String((e && e.message) || e)}; }
if (!r.ok) return {status: r.status, err: 'HTTP ' + r.status};
const type = r.headers.get('content-type') || '', final = r.url || '';
const rd = r.body.getReader();
const parts = []; let n = 0;
for (;;) {
  const {done, value} = await rd.read();
  if (done) break;
  n += value.length;
  if (n > max) { rd.cancel(); return {status: r.status, size: n, err: 'over ' + max + ' bytes'}; }
  parts.push(value);
}
const all = new Uint8Array(n); let o = 0;
for (const p of parts) { all.set(p, o); o += p.length; }
let s = '';
for (let i = 0; i < all.length; i += 0x8000) s += String.fromCharCode.apply(null, all.subarray(i, i + 0x8000));
return {status: r.status, size: n, b64: btoa(s), type, final};
})()`

type fetched struct {
	Status int    `json:"status"`
	Size   int64  `json:"size"`
	B64    string `json:"b64"`
	Err    string `json:"err"`
	Type   string `json:"type"`
	Final  string `json:"final"`
}

// Got is a fetched file: its bytes, the type the server said and the
// address it came from in the end (after redirects).
type Got struct {
	Data  []byte
	Type  string
	Final string
}

// fetchAs fetches u inside the page (a chromedp tab): with the account's
// cookies for route Session, with none for Anonymous, and same-origin
// (what a blob: or data: address needs) for Page. More than max bytes is
// an error wrapping artifacts.ErrTooLarge.
func fetchAs(ctx context.Context, u string, route artifacts.Route, max int64) (Got, error) {
	cred := "'omit'"
	switch route {
	case artifacts.Session:
		cred = "'include'"
	case artifacts.Page:
		cred = "'same-origin'"
	}
	q, _ := json.Marshal(u)
	f, err := chromedp.Run(ctx, chromedp.Evaluate[fetched](fmt.Sprintf(fetchJS, q, max, cred), chromedp.EvalAwaitPromise))
	switch {
	case err != nil:
		return Got{}, fmt.Errorf("%w: %v", ErrFetch, err)
	case f.Size > max && f.Err != "":
		return Got{}, fmt.Errorf("%w: more than %d bytes (artifacts.maxFileSize)", artifacts.ErrTooLarge, max)
	case f.Err != "":
		return Got{}, fmt.Errorf("%w: %s", ErrFetch, f.Err)
	}
	data, err := base64.StdEncoding.DecodeString(f.B64)
	return Got{Data: data, Type: f.Type, Final: f.Final}, err
}
