package browser

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/spoolgate/spoolgate/internal/markdown"
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
	// Lost and Added count the structure (headings and their levels,
	// list items, code blocks, quotes, table rows, links, bold, italic,
	// inline code) the page shows and the result lacks, and the result
	// has beyond the page; counted only when the text is the same.
	Lost, Added int
}

// checkResult compares a result with the answer element's visible text
// and its HTML (chrome and hidden elements already left out of both, see
// answerViewJS). A Markdown result is rendered first (goldmark, GFM), so
// its syntax (list markers, fences, table pipes and padding, link
// targets, escapes) is not compared; then both sides drop every
// white-space and zero-width character and are compared in Unicode NFC.
// What is left is every character a reader sees, in order: a
// mis-decoded character, a leaked code label or caption, a lost or added
// word all differ; how lines break does not (a page may render a soft
// break as a line).
//
// The same words can hide a lost structure: a heading mark dropped (the
// heading read as a paragraph), a heading's level changed, a code fence
// or a link lost. So a Markdown result is also taken to its outline
// (markdown.Outline) and compared with the page's: what the page shows
// and the result lacks is a loss, and a result that lost anything is
// never verified. What the result adds (markup the page draws some other
// way, or not at all) is counted and said, not held against it: the page
// is the reference for what must not be lost, not for how Markdown is
// written.
func checkResult(text, format, visible, pageHTML string) PageCheck {
	if strings.TrimSpace(visible) == "" {
		return PageCheck{State: CheckUnchecked}
	}
	got := text
	if format == FormatMarkdown {
		got = markdown.Text(text)
	}
	a, b := checkNorm(got), checkNorm(visible)
	if !slices.Equal(a, b) {
		return PageCheck{State: CheckDiffers, Diff: pageDiff(a, b)}
	}
	if format != FormatMarkdown || pageHTML == "" {
		return PageCheck{State: CheckVerified}
	}
	lost, added := markdown.CompareOutline(markdown.Outline(text), markdown.OutlineHTML(pageHTML))
	c := PageCheck{State: CheckVerified, Lost: len(lost), Added: len(added)}
	if len(lost) > 0 {
		c.State = CheckDiffers
		c.Diff = fmt.Sprintf("the same text, but the result lost %d of the page's structure: %s", len(lost), marksList(lost))
		if len(added) > 0 {
			c.Diff += fmt.Sprintf("; it has instead %s", marksList(added))
		}
	}
	return c
}

// lessLost reports whether c, a check that differs, lost less than o:
// the same text with part of its structure lost beats a different text,
// and fewer marks lost beat more. Between equals the earlier method
// stays.
func (c PageCheck) lessLost(o PageCheck) bool {
	rank := func(p PageCheck) int {
		if p.Lost > 0 {
			return p.Lost // Lost is counted only when the text is the same
		}
		return math.MaxInt
	}
	return rank(c) < rank(o)
}

// marksList names the first few marks.
func marksList(ms []markdown.Mark) string {
	const show = 3
	var parts []string
	for i, m := range ms {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(ms)-show))
			break
		}
		parts = append(parts, m.String())
	}
	return strings.Join(parts, ", ")
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

// checkNorm is s without white space or zero-width characters, in NFC
// (markdown.Squeeze, the outline's own normalisation), as runes.
func checkNorm(s string) []rune { return []rune(markdown.Squeeze(s)) }

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
		c := checkResult(text, format, v.Text, v.HTML)
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

// Text likeness, for the proposal of a network key (suggest_net.go):
// how much of the page's text a candidate field holds.

// letterBag counts the letters and digits of s (case folded).
func letterBag(s string) map[rune]int {
	bag := map[rune]int{}
	for _, r := range letters(s, 1<<20) {
		bag[r]++
	}
	return bag
}

// bagCover is how much of want's letters text holds, less what text
// holds beyond them, over want's size: 1 for the same letters, 0 for
// none (a cheap likeness, for ranking: no order is compared).
func bagCover(want map[rune]int, text string) float64 {
	total := 0
	for _, n := range want {
		total += n
	}
	if total == 0 {
		return 0
	}
	got := letterBag(text)
	common, extra := 0, 0
	for r, n := range got {
		c := min(n, want[r])
		common += c
		extra += n - c
	}
	return float64(common-extra) / float64(total)
}

// likeness is how alike two answers are by their letters and digits
// alone (case folded): twice their longest common subsequence over their
// summed lengths, 1 for the same. Markup that the page renders away
// (Markdown's ** and #, a link's URL is the exception), spacing and
// punctuation do not count, so the model's Markdown and the page's text
// of it come out alike. At most 4,000 letters of each are compared.
func likeness(a, b string) float64 {
	x, y := letters(a, 4000), letters(b, 4000)
	if len(x) == 0 || len(y) == 0 {
		return 0
	}
	if lo, hi := min(len(x), len(y)), max(len(x), len(y)); float64(lo) < netMatch*float64(hi)*0.5 {
		return 0 // too far apart in length to come near netMatch
	}
	prev, cur := make([]int, len(y)+1), make([]int, len(y)+1)
	for i := range x {
		for j := range y {
			switch {
			case x[i] == y[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return 2 * float64(prev[len(y)]) / float64(len(x)+len(y))
}

func letters(s string, n int) []rune {
	var out []rune
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			out = append(out, unicode.ToLower(r))
			if len(out) == n {
				break
			}
		}
	}
	return out
}
