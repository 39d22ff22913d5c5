package testkit

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM))

// MarkdownHTML renders Markdown (GitHub-flavoured) to HTML. Two texts
// that render the same have the same elements in the same order: the
// README's normalisation of a web answer read from the page (list
// marker, emphasis character, trailing spaces, table padding, escapes).
func MarkdownHTML(md string) string {
	var b bytes.Buffer
	_ = gfm.Convert([]byte(md), &b)
	return b.String()
}
