package browser

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/spoolgate/spoolgate/internal/markdown"
	"golang.org/x/text/unicode/norm"
)

// How a result compares with the answer the page showed (the task
// file's resultCheck).
const (
	// CheckVerified: the result, rendered to text, is the page's visible
	// answer after the normalisation below.
	CheckVerified = "verified"
	// CheckDiffers: it is not; the first difference goes with it.
	CheckDiffers = "differs"
	// CheckUnchecked: the page showed no answer element to compare with.
	CheckUnchecked = "unchecked"
)

// PageCheck is a result's comparison with the page.
type PageCheck struct {
	State string // CheckVerified, CheckDiffers or CheckUnchecked
	Diff  string // the first difference, when it differs
}

// checkResult compares a result with the answer element's visible text
// (chrome and hidden elements already left out of it, see answerViewJS).
// A Markdown result is rendered first (goldmark, GFM), so its syntax
// (list markers, fences, table pipes and padding, link targets, escapes)
// is not compared; then both sides drop every white-space and zero-width
// character and are compared in Unicode NFC. What is left is every
// character a reader sees, in order: a mis-decoded character, a leaked
// code label or caption, a lost or added word all differ; how lines
// break does not (a page may render a soft break as a line).
func checkResult(text, format, visible string) PageCheck {
	if strings.TrimSpace(visible) == "" {
		return PageCheck{State: CheckUnchecked}
	}
	got := text
	if format == FormatMarkdown {
		got = markdown.Text(text)
	}
	a, b := checkNorm(got), checkNorm(visible)
	if slices.Equal(a, b) {
		return PageCheck{State: CheckVerified}
	}
	return PageCheck{State: CheckDiffers, Diff: pageDiff(a, b)}
}

// pageBehind reports whether the page's visible text is a proper
// beginning of the result (after the same normalisation): the page has
// not shown all of it yet.
func pageBehind(text, format, visible string) bool {
	if format == FormatMarkdown {
		text = markdown.Text(text)
	}
	a, b := checkNorm(text), checkNorm(visible)
	return len(b) < len(a) && slices.Equal(a[:len(b)], b)
}

// checkNorm is s without white space or zero-width characters, in NFC.
func checkNorm(s string) []rune {
	s = norm.NFC.String(s)
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if unicode.IsSpace(r) || r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\u2060' || r == '\ufeff' {
			continue
		}
		out = append(out, r)
	}
	return out
}

// diffContext is how many characters around the first difference it
// quotes.
const diffContext = 12

// pageDiff says where a (the result) and b (the page) part, quoting a
// few characters of each from just before that point.
func pageDiff(a, b []rune) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-diffContext)
	quote := func(r []rune) string {
		end := min(len(r), i+diffContext)
		s := string(r[from:end])
		if from > 0 {
			s = "…" + s
		}
		if end < len(r) {
			s += "…"
		}
		return s
	}
	switch {
	case i == len(a):
		return fmt.Sprintf("at character %d the result ends; the page goes on %q", i+1, quote(b))
	case i == len(b):
		return fmt.Sprintf("at character %d the page ends; the result goes on %q", i+1, quote(a))
	}
	return fmt.Sprintf("at character %d (white space left out) the result reads %q, the page %q", i+1, quote(a), quote(b))
}

// checkSettle bounds how long a result that differs from the page waits
// for the page to catch up (a renderer a frame behind the response's
// end); checkAppear how long it waits for a page that shows no answer
// yet; checkCatchUp how long it waits while the page shows a beginning
// of the result and still grows (a page that types the answer out after
// its response ended); checkPoll is how often it looks again meanwhile.
const (
	checkSettle  = 2 * time.Second
	checkAppear  = 10 * time.Second
	checkCatchUp = 30 * time.Second
	checkPoll    = 100 * time.Millisecond
)

// pageCheck compares a result with the answer element as the page shows
// it now. A difference counts only once the page has held still between
// two looks: a page still rendering the end it was sent is looked at
// again, up to checkSettle. A page that shows a beginning of the result
// is catching up (a typing animation): it is waited for until it has
// held still for the site's quiet, up to checkCatchUp, so that a whole
// result is never dropped for a page's shorter, unfinished text.
func (d *driver) pageCheck(ctx context.Context, text, format string) (PageCheck, bool) {
	began := time.Now()
	prev, changed := "", began
	for {
		v, err := d.answerView(ctx)
		if err != nil {
			d.log.Warn("driver: the answer could not be read from the page to check it", "err", err)
			return PageCheck{State: CheckUnchecked}, false
		}
		if !v.Found || strings.TrimSpace(v.Text) == "" {
			// Not shown yet: a page that renders the answer after its
			// stream ended (a typing animation, a busy machine) is
			// given checkAppear to show it before the result goes
			// unchecked.
			if now := time.Now(); now.Sub(began) >= checkAppear {
				return PageCheck{State: CheckUnchecked}, false
			}
			select {
			case <-ctx.Done():
				return PageCheck{State: CheckUnchecked}, false
			case <-time.After(checkPoll):
			}
			continue
		}
		c := checkResult(text, format, v.Text)
		if c.State != CheckDiffers {
			return c, false
		}
		now := time.Now()
		still := v.Text == prev
		if !still {
			prev, changed = v.Text, now
		}
		behind := pageBehind(text, format, v.Text)
		if behind {
			if now.Sub(changed) >= max(d.t.Quiet, checkPoll) || now.Sub(began) >= checkCatchUp {
				return c, true
			}
		} else if still || now.Sub(began) >= checkSettle {
			return c, false
		}
		select {
		case <-ctx.Done():
			return c, false
		case <-time.After(checkPoll):
		}
	}
}
