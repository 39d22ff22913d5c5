// Package markdown renders a task's result, Markdown that a model wrote,
// as HTML that is safe to show in spoolgate's own pages: GitHub-flavoured
// Markdown (tables, strikethrough, task lists, autolinks) by goldmark, raw
// HTML never passed through, and links kept only to http, https and
// mailto (any other link shows as its text; an image as a link to it, so
// the page loads nothing from elsewhere), save the page's own files that
// RenderOwn is told of: those images are shown, those links kept.
package markdown

import (
	"bytes"
	"html"
	"html/template"
	"net/url"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// md is goldmark with GFM and the link filter. Its HTML renderer is left
// at its default, which omits raw HTML (html.WithUnsafe is never set).
var md = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkFilter{}, 1000))),
)

// Render returns src rendered as HTML.
func Render(src string) (template.HTML, error) {
	return RenderOwn(src, nil)
}

// Own are the addresses of the files a page serves itself (a task's saved
// images and downloads), each marked true when the page may show it inline
// (an image type it serves as such). The answer's Markdown points at them
// once the saved files replaced the site's addresses; they are the only
// relative addresses that stay links, and the only images shown: nothing
// an answer names elsewhere is loaded by the page.
type Own map[string]bool

// ownKey carries a conversion's Own to the link filter.
var ownKey = parser.NewContextKey()

// RenderOwn is Render that keeps links to own's addresses and shows the
// images among them.
func RenderOwn(src string, own Own) (template.HTML, error) {
	pc := parser.NewContext()
	pc.Set(ownKey, own)
	var b bytes.Buffer
	if err := md.Convert([]byte(src), &b, parser.WithContext(pc)); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil //nolint:gosec // raw HTML off, links filtered
}

// Allowed reports whether a link's destination may stay a link: an
// absolute http, https or mailto URL.
func Allowed(dest string) bool {
	u, err := url.Parse(strings.TrimSpace(dest))
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	case "mailto":
		return u.Opaque != ""
	}
	return false
}

// relKept is the rel of every link that stays: the page vouches for none.
var relKept = []byte("nofollow noopener noreferrer")

// linkFilter unwraps every link whose destination is not Allowed into its
// text, turns images into links to them (or their alt text), and marks the
// links that stay rel="nofollow noopener noreferrer".
type linkFilter struct{}

func (linkFilter) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	src := reader.Source()
	own, _ := pc.Get(ownKey).(Own)
	var unwrap, images []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch v := n.(type) {
		case *ast.Link:
			if _, ok := own[string(v.Destination)]; ok {
				break // the page's own file
			}
			if !Allowed(string(v.Destination)) {
				unwrap = append(unwrap, n)
			} else {
				v.SetAttributeString("rel", relKept)
			}
		case *ast.AutoLink:
			dest := string(v.URL(src))
			if v.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(dest), "mailto:") {
				dest = "mailto:" + dest
			}
			if !Allowed(dest) {
				unwrap = append(unwrap, n)
			} else {
				v.SetAttributeString("rel", relKept)
			}
		case *ast.Image:
			if own[string(v.Destination)] {
				break // the page's own image: shown
			}
			images = append(images, n)
		}
		return ast.WalkContinue, nil
	})
	for _, n := range images {
		img := n.(*ast.Image)
		parent := n.Parent()
		_, mine := own[string(img.Destination)]
		if mine || Allowed(string(img.Destination)) {
			l := ast.NewLink()
			l.Destination = img.Destination
			l.SetAttributeString("rel", relKept)
			for c := img.FirstChild(); c != nil; {
				next := c.NextSibling()
				l.AppendChild(l, c)
				c = next
			}
			if l.ChildCount() == 0 {
				l.AppendChild(l, ast.NewString(img.Destination))
			}
			parent.ReplaceChild(parent, n, l)
		} else {
			unwrap = append(unwrap, n)
		}
	}
	for _, n := range unwrap {
		parent := n.Parent()
		if parent == nil {
			continue
		}
		if al, ok := n.(*ast.AutoLink); ok {
			parent.ReplaceChild(parent, n, ast.NewString(al.Label(src)))
			continue
		}
		for c := n.FirstChild(); c != nil; {
			next := c.NextSibling()
			parent.InsertBefore(parent, n, c)
			c = next
		}
		parent.RemoveChild(parent, n)
	}
}

// tag matches one tag of goldmark's own HTML, whose attribute values
// are always escaped (a '>' inside one is &gt;).
var tag = regexp.MustCompile(`<[^>]*>`)

// Text returns the text a reader sees of src rendered: its words, code
// and table cells without Markdown's syntax (markers, fences, pipes,
// link targets, escapes, entities). Raw HTML in src is text, as chat
// pages show it (they escape it; "<tags>" in an answer is read as
// written). Whitespace is not meant to match a page's: callers compare
// it without whitespace.
func Text(src string) string {
	var b bytes.Buffer
	if err := plain.Convert([]byte(src), &b); err != nil {
		return src
	}
	return html.UnescapeString(tag.ReplaceAllString(b.String(), " "))
}

// plain is goldmark with GFM, raw HTML written as escaped text, and
// nothing else: a link's text stays its text whatever its target.
var plain = goldmark.New(goldmark.WithExtensions(extension.GFM),
	goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(rawAsText{}, 0))))

// rawAsText renders raw HTML, inline and block, as the escaped text of
// its source.
type rawAsText struct{}

func (rawAsText) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindRawHTML, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			segs := n.(*ast.RawHTML).Segments
			for i := 0; i < segs.Len(); i++ {
				seg := segs.At(i)
				_, _ = w.WriteString(html.EscapeString(string(seg.Value(src))))
			}
		}
		return ast.WalkSkipChildren, nil
	})
	r.Register(ast.KindHTMLBlock, func(w util.BufWriter, src []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			b := n.(*ast.HTMLBlock)
			for i := 0; i < b.Lines().Len(); i++ {
				l := b.Lines().At(i)
				_, _ = w.WriteString(html.EscapeString(string(l.Value(src))))
			}
			if b.HasClosure() {
				_, _ = w.WriteString(html.EscapeString(string(b.ClosureLine.Value(src))))
			}
		}
		return ast.WalkSkipChildren, nil
	})
}
