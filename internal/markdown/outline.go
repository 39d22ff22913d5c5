package markdown

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/text/unicode/norm"
)

// An answer's structure, for the result check (issue 55): the text of a
// result and of the page can match while the result lost a heading mark
// (a heading read as a paragraph), a heading's level, a list, a code
// fence or a link, since each renders to the same words. Both sides are
// taken to the same outline, the result by rendering its Markdown and the
// page from its answer element's HTML, and compared as multisets, so what
// the result lost (on the page, not in the result) is counted apart from
// what it adds (markup the page does not draw: a page that shows bold as
// a styled span has no <strong> to match the result's).

// Mark is one element of an answer's structure.
type Mark struct {
	Kind  string // h, li, pre, quote, tr, a, strong, em, code, del
	Level int    // a heading's level; a list item's or quote's depth
	Text  string // what it holds, without white space (blocks: headings and code only)
}

func (m Mark) String() string {
	quote := func(s string) string {
		r := []rune(s)
		if len(r) > 30 {
			s = string(r[:30]) + "…"
		}
		return fmt.Sprintf("%q", s)
	}
	switch m.Kind {
	case "h":
		return fmt.Sprintf("a level-%d heading %s", m.Level, quote(m.Text))
	case "li":
		return fmt.Sprintf("a list item at depth %d", m.Level)
	case "pre":
		return "a code block " + quote(m.Text)
	case "quote":
		return fmt.Sprintf("a quote at depth %d", m.Level)
	case "tr":
		return "a table row"
	case "a":
		return "a link " + quote(m.Text)
	case "strong":
		return "bold " + quote(m.Text)
	case "em":
		return "italic " + quote(m.Text)
	case "code":
		return "inline code " + quote(m.Text)
	case "del":
		return "struck-through " + quote(m.Text)
	}
	return m.Kind
}

// Outline is the structure of src, Markdown, as rendered (GFM; raw HTML
// is text, as chat pages show it).
func Outline(src string) []Mark {
	var b bytes.Buffer
	if err := plain.Convert([]byte(src), &b); err != nil {
		return nil
	}
	return OutlineHTML(b.String())
}

// inlineKinds are the inline elements compared, by the kind they count
// as (b is bold as strong is).
var inlineKinds = map[atom.Atom]string{
	atom.A: "a", atom.Strong: "strong", atom.B: "strong", atom.Em: "em", atom.I: "em",
	atom.Code: "code", atom.Del: "del", atom.S: "del", atom.Strike: "del",
}

// OutlineHTML is the structure of an HTML fragment: headings with their
// level and text, list items and quotes with their depth, code blocks
// with their code, table rows, and the inline links, bold, italic, code
// and strike-through with their text. Inline marks inside a code block
// are the highlighter's, not the answer's, and one with no text (a
// heading's anchor icon) is not counted.
func OutlineHTML(h string) []Mark {
	nodes, err := html.ParseFragment(strings.NewReader(h), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		return nil
	}
	var out []Mark
	var walk func(n *html.Node, lists, quotes int)
	walk = func(n *html.Node, lists, quotes int) {
		if n.Type != html.ElementNode {
			return
		}
		switch n.DataAtom {
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			out = append(out, Mark{Kind: "h", Level: int(n.Data[1] - '0'), Text: Squeeze(textOf(n))})
		case atom.Ul, atom.Ol:
			lists++
		case atom.Li:
			out = append(out, Mark{Kind: "li", Level: lists})
		case atom.Blockquote:
			quotes++
			out = append(out, Mark{Kind: "quote", Level: quotes})
		case atom.Tr:
			out = append(out, Mark{Kind: "tr"})
		case atom.Pre:
			out = append(out, Mark{Kind: "pre", Text: Squeeze(textOf(n))})
			return
		}
		if k, ok := inlineKinds[n.DataAtom]; ok {
			if t := Squeeze(textOf(n)); t != "" {
				out = append(out, Mark{Kind: k, Text: t})
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, lists, quotes)
		}
	}
	for _, n := range nodes {
		walk(n, 0, 0)
	}
	return out
}

// CompareOutline counts what result lacks of page (lost) apart from
// what it has beyond page (added), each in page or result order.
func CompareOutline(result, page []Mark) (lost, added []Mark) {
	left := make(map[Mark]int, len(result))
	for _, m := range result {
		left[m]++
	}
	for _, m := range page {
		if left[m] > 0 {
			left[m]--
			continue
		}
		lost = append(lost, m)
	}
	for _, m := range result {
		if left[m] > 0 {
			left[m]--
			added = append(added, m)
		}
	}
	return lost, added
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// Squeeze is s without white space or zero-width characters, in NFC: the
// text the result check compares (browser's checkNorm), and an outline
// mark's text.
func Squeeze(s string) string {
	s = norm.NFC.String(s)
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\u2060' || r == '\ufeff' {
			return -1
		}
		return r
	}, s)
}
