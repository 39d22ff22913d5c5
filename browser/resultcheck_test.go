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
		got := checkResult(c.text, c.format, c.page, "")
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
		if got := checkResult(text, FormatMarkdown, page, ""); got.State != CheckVerified {
			t.Errorf("%q: %s %s", text, got.State, got.Diff)
		}
	}
}

// TestCheckResult_structure: the same words with a structure lost (a
// planted lossy reader's result) differ, the loss named; a result that
// only adds markup the page draws otherwise is verified, the addition
// counted.
func TestCheckResult_structure(t *testing.T) {
	const page = `<h2>Release notes</h2><p>See the <a href="https://x.example/c">changelog</a> for <strong>all</strong> of it.</p>` +
		`<ul><li>one<ul><li>two</li></ul></li></ul><pre><code class="language-go">x := 1</code></pre>`
	const visible = "Release notes\nSee the changelog for all of it.\none\ntwo\nx := 1"
	for _, c := range []struct {
		name, text, want, diff string
		lost, added            int
	}{
		{"exact", "## Release notes\n\nSee the [changelog](https://x.example/c) for **all** of it.\n\n- one\n  - two\n\n```go\nx := 1\n```", CheckVerified, "", 0, 0},
		{"heading mark dropped", "Release notes\n\nSee the [changelog](https://x.example/c) for **all** of it.\n\n- one\n  - two\n\n```go\nx := 1\n```", CheckDiffers, `lost 1 of the page's structure: a level-2 heading "Releasenotes"`, 1, 0},
		{"heading level changed", "# Release notes\n\nSee the [changelog](https://x.example/c) for **all** of it.\n\n- one\n  - two\n\n```go\nx := 1\n```", CheckDiffers, `it has instead a level-1 heading`, 1, 1},
		{"link lost", "## Release notes\n\nSee the changelog for **all** of it.\n\n- one\n  - two\n\n```go\nx := 1\n```", CheckDiffers, `a link "changelog"`, 1, 0},
		{"nesting flattened", "## Release notes\n\nSee the [changelog](https://x.example/c) for **all** of it.\n\n- one\n- two\n\n```go\nx := 1\n```", CheckDiffers, "a list item at depth 2", 1, 1},
		{"fence lost", "## Release notes\n\nSee the [changelog](https://x.example/c) for **all** of it.\n\n- one\n  - two\n\nx := 1", CheckDiffers, `a code block "x:=1"`, 1, 0},
		{"more markup than the page", "## Release notes\n\nSee the [changelog](https://x.example/c) for **all** of *it*.\n\n- one\n  - two\n\n```go\nx := 1\n```", CheckVerified, "", 0, 1},
	} {
		got := checkResult(c.text, FormatMarkdown, visible, page)
		if got.State != c.want || !strings.Contains(got.Diff, c.diff) || got.Lost != c.lost || got.Added != c.added {
			t.Errorf("%s: %s %q, lost %d added %d; want %s with %q, lost %d added %d", c.name, got.State, got.Diff, got.Lost, got.Added, c.want, c.diff, c.lost, c.added)
		}
	}
}

// TestPageCheck_lessLost: among methods that all differ, the same text
// with less structure lost is kept over more lost and over other text.
func TestPageCheck_lessLost(t *testing.T) {
	text := PageCheck{State: CheckDiffers, Diff: "at character 3"}
	one := PageCheck{State: CheckDiffers, Lost: 1}
	two := PageCheck{State: CheckDiffers, Lost: 2}
	for _, c := range []struct {
		name string
		a, b PageCheck
		want bool
	}{
		{"structure over text", two, text, true},
		{"text over structure", text, one, false},
		{"fewer lost", one, two, true},
		{"more lost", two, one, false},
		{"equal keeps the earlier", one, one, false},
		{"text and text", text, text, false},
	} {
		if got := c.a.lessLost(c.b); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
