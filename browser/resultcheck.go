package browser

import (
	"fmt"
	"slices"
	"strings"
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
