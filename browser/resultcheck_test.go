package browser

import (
	"strings"
	"testing"
)

// The normalisation: Markdown syntax, white space and zero-width
// characters do not count; every character a reader sees does.
func TestCheckResult(t *testing.T) {
	for _, c := range []struct {
		name, text, format, page, want, diff string
	}{
		{"markdown rendered", "## Hi\n\n- **one**\n- [two](https://x.example/)\n\n| a | b |\n|:-|-:|\n| 1 | 2 |", FormatMarkdown, "Hi\none\ntwo\na\tb\n1\t2", CheckVerified, ""},
		{"code block", "```go\nx := 1\n```", FormatMarkdown, "x := 1", CheckVerified, ""},
		{"escapes and entities", `a \* b &amp; c`, FormatMarkdown, "a * b & c", CheckVerified, ""},
		{"soft break rendered as a line", "one\ntwo", FormatMarkdown, "one\ntwo", CheckVerified, ""},
		{"zero width and nbsp", "a b", FormatText, "a\u00a0\u200bb", CheckVerified, ""},
		{"NFC", "e\u0301", FormatText, "\u00e9", CheckVerified, ""},
		{"mojibake", "## 发布", FormatMarkdown, "å\u008f‘å¸ƒ", CheckDiffers, "at character 1"},
		{"leaked label", "```go\nx\n```", FormatMarkdown, "go\nx", CheckDiffers, `the page "gox"`},
		{"result ends early", "abc", FormatText, "abcdef", CheckDiffers, "the result ends"},
		{"page ends early", "abcdef", FormatText, "abc", CheckDiffers, "the page ends"},
		{"no answer on the page", "abc", FormatText, " \n", CheckUnchecked, ""},
	} {
		got := checkResult(c.text, c.format, c.page)
		if got.State != c.want || !strings.Contains(got.Diff, c.diff) {
			t.Errorf("%s: %s %q; want %s with %q", c.name, got.State, got.Diff, c.want, c.diff)
		}
	}
}

// Raw HTML in a result is text, as a chat page shows it: "<tags>" in the
// stream and on the page agree (the DOM method's escaped form too).
func TestCheckResult_RawHTML(t *testing.T) {
	for _, text := range []string{`quotes "double" and <tags>`, `quotes "double" and &lt;tags&gt;`, "<div>\nblock\n</div>"} {
		page := `quotes "double" and <tags>`
		if strings.HasPrefix(text, "<div>") {
			page = "<div> block </div>"
		}
		if got := checkResult(text, FormatMarkdown, page); got.State != CheckVerified {
			t.Errorf("%q: %s %s", text, got.State, got.Diff)
		}
	}
}
