package markdown

import (
	"slices"
	"testing"
)

// TestOutline: a result's Markdown and the page's HTML of the same
// answer give the same outline; anchors without text and a
// highlighter's spans inside code do not count.
func TestOutline(t *testing.T) {
	md := "## Título\n\n1. **uno** and *dos*\n   - `tres`\n\n> quoted [link](https://x.example/)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nfunc f() {}\n```\n"
	page := `<h2><a class="anchor" href="#t"></a>Título</h2><ol><li><p><b>uno</b> and <i>dos</i></p><ul><li><code>tres</code></li></ul></li></ol>` +
		`<blockquote><p>quoted <a href="https://x.example/">link</a></p></blockquote>` +
		`<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>` +
		`<pre><code class="language-go"><span class="hl-k"><strong>func</strong></span> f() {}</code></pre>`
	want := []Mark{{Kind: "h", Level: 2, Text: "Título"}, {Kind: "li", Level: 1}, {Kind: "strong", Text: "uno"}, {Kind: "em", Text: "dos"},
		{Kind: "li", Level: 2}, {Kind: "code", Text: "tres"}, {Kind: "quote", Level: 1}, {Kind: "a", Text: "link"},
		{Kind: "tr"}, {Kind: "tr"}, {Kind: "pre", Text: "funcf(){}"}}
	if got := Outline(md); !slices.Equal(got, want) {
		t.Errorf("Outline:\n got %v\nwant %v", got, want)
	}
	if got := OutlineHTML(page); !slices.Equal(got, want) {
		t.Errorf("OutlineHTML:\n got %v\nwant %v", got, want)
	}
}

func TestCompareOutline(t *testing.T) {
	h := func(l int, s string) Mark { return Mark{Kind: "h", Level: l, Text: s} }
	a := Mark{Kind: "a", Text: "x"}
	lost, added := CompareOutline([]Mark{h(1, "T"), a, a}, []Mark{h(2, "T"), a})
	if !slices.Equal(lost, []Mark{h(2, "T")}) || !slices.Equal(added, []Mark{h(1, "T"), a}) {
		t.Errorf("lost %v, added %v", lost, added)
	}
}
