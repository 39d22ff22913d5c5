package browser

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chromedp/chromedp"
)

// answerTrack follows the reads of the answer element while it streams.
// The result is the read taken when the answer has ended, never an
// earlier one: a Markdown renderer shows a link's source while it streams
// and the shorter rendered link once it is whole, so a longer earlier
// read is a wrong result, not a safer one. What the old "never shorter"
// rule guarded against is told by what happened instead:
//
//   - the element was replaced (a new serial at the same count: the page
//     re-rendered its answer): the new element is the answer, logged;
//   - the new read does not continue the old one: its start is not the
//     old start, but the old read ends with what the new one begins
//     with (a virtualised list dropped the top of a long answer): the
//     dropped top is kept, and put back before the final read.
type answerTrack struct {
	last       string
	lastID     int
	stillSince time.Time
	head       string // the top a virtualised list dropped, to put back
	replaced   int    // times the element was replaced
	dropped    int    // times the top was dropped
}

// keepThinkingJS watches the page from the send on and keeps, in
// window.__sgThink, the new answer's thinking block as last read while
// it was there: a page may fold, empty or remove its thinking once the
// answer ends, so the read at the end finds none. A MutationObserver (on
// the document and every open shadow root) reads it after each change
// the page makes, so even an answer that streams and ends between two of
// the driver's polls leaves its thinking behind. The answer element of
// before the send is not the new one; a block with no text (emptied)
// is not kept over one that had it (parsed inert, so nothing loads).
const keepThinkingJS = `(() => {
if (window.__sgThinkObs) window.__sgThinkObs.disconnect();
window.__sgThink = null;
const old = qlast(__ANSWER__);
` + thinkingJS + `
const take = () => {
  const el = qlast(__ANSWER__);
  if (!el || el === old) return;
  const t = findThinking(el, __THINKING__);
  if (t && (t.plain || new DOMParser().parseFromString(t.html, 'text/html').body.textContent.trim())) window.__sgThink = {thinkHtml: t.html, thinkText: t.plain, thinkHow: t.how};
};
const o = new MutationObserver(take);
for (const r of [document, ...openRoots()]) o.observe(r, {subtree: true, childList: true, characterData: true});
window.__sgThinkObs = o;
return true;
})()`

// keepThinking starts keepThinkingJS; a page it cannot run on keeps
// nothing (the thinking is then read at the end only).
func (d *driver) keepThinking(ctx context.Context) {
	expr := strings.NewReplacer("__ANSWER__", js(d.site.Answer), "__THINKING__", js(d.site.Thinking)).Replace(keepThinkingJS)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("(() => {"+helpers+"\nreturn "+expr+";\n})()")); err != nil {
		d.log.Debug("driver: cannot keep the thinking while the answer streams", "err", err)
		return
	}
	d.thinkKept = true
}

// keptThinking is the thinking keepThinking kept, as Markdown; "" when
// none. It stops the watch.
func (d *driver) keptThinking(ctx context.Context) string {
	v, err := chromedp.Run(ctx, chromedp.Evaluate[answerView](`(() => { if (window.__sgThinkObs) window.__sgThinkObs.disconnect(); return window.__sgThink || {}; })()`))
	if err != nil {
		return ""
	}
	return thinkMarkdown(v)
}

// take records one read; it reports whether the read changed.
func (a *answerTrack) take(text string, id int, now time.Time, d *driver) bool {
	changed := a.stillSince.IsZero() || text != a.last || id != a.lastID
	if !changed {
		return false
	}
	if a.lastID != 0 && id != a.lastID {
		a.replaced++
		if a.replaced == 1 {
			d.log.Info("driver: the page replaced its answer element; reading the new one", "had", utf8.RuneCountInString(a.last), "read", utf8.RuneCountInString(text))
		}
	} else if a.last != "" && text != "" {
		if k := topDropped(a.last, text); k > 0 {
			a.dropped++
			a.head += a.last[:k]
			if a.dropped == 1 {
				d.log.Warn("driver: the answer's top left the page (a virtualised list?); keeping it", "kept", utf8.RuneCountInString(a.head))
			}
		}
	}
	a.last, a.lastID, a.stillSince = text, id, now
	return true
}

// whole is the final read with a dropped top put back.
func (a *answerTrack) whole(final string) string { return a.head + final }

// minOverlap is how much of the new read must repeat the end of the old
// one for the change to count as a dropped top rather than new content.
const minOverlap = 16

// topDropped returns k > 0 when cur continues old[k:]: cur does not start
// the way old does, and old[k:] is a prefix of cur at least minOverlap
// bytes long. Otherwise 0 (a continuation, a re-render of the tail such
// as a link that rendered, or a different text).
func topDropped(old, cur string) int {
	if commonPrefix(old, cur) >= min(len(old), len(cur), minOverlap) {
		return 0 // same start: a continuation or an edit of the tail
	}
	// The longest suffix of old that begins cur.
	for k := 1; k <= len(old)-minOverlap; k++ {
		if !utf8.RuneStart(old[k]) {
			continue
		}
		if strings.HasPrefix(cur, old[k:]) {
			return k
		}
	}
	return 0
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
