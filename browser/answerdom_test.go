//go:build linux

package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/spoolgate/spoolgate/spool/config"
)

// The answer element as the page renders it, without a site key (no
// `chrome:`): each case is an answer's HTML and CSS, the Markdown the dom
// method must give, and the text the text method must give; both are
// then checked against the page and must be verified.
func TestDriver_AnswerView_PageRules(t *testing.T) {
	// css: "&" is the answer element.
	cases := []struct {
		name, css, html, md, text string
		think, key                string // the thinking the dom method tells apart; the site's thinking: key
	}{
		{"pre-wrap plain text", "&{white-space:pre-wrap}",
			"The answer is 42 ✓.\n\nSecond paragraph of the reply.\nThird line, last.",
			"The answer is 42 ✓.\n\nSecond paragraph of the reply.  \nThird line, last.",
			"The answer is 42 ✓.\n\nSecond paragraph of the reply.\nThird line, last.", "", ""},
		{"pre-line inside a span", "& span{white-space:pre-line}",
			"<span>第一段：中文 🚀\n\n第二段。</span>",
			"第一段：中文 🚀\n\n第二段。",
			"第一段：中文 🚀\n\n第二段。", "", ""},
		{"hidden elements", "& .sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0,0,0,0)}",
			`<p>Shown.</p><p style="display:none">display none</p><p style="visibility:hidden">invisible</p><p aria-hidden="true">aria</p><p hidden>attr</p><span class="sr">screen reader only</span><details><summary>More</summary><p>folded</p></details><p>Also shown.</p>`,
			"Shown.\n\nMore\n\nAlso shown.",
			"Shown.\n\nMore\n\nAlso shown.", "", ""},
		{"code under a header with a label and 复制", "& .head{display:flex;gap:4px}",
			`<p>Run:</p><div class="cb"><div class="head"><span>python</span><span class="cp">复制</span></div><pre><code>print("hi")
x = 1
</code></pre></div><p>Done.</p>`,
			"Run:\n\n```python\nprint(\"hi\")\nx = 1\n```\n\nDone.",
			"Run:\n\nprint(\"hi\")\nx = 1\n\n\nDone.", "", ""}, // as innerText: the code's own last break, then the paragraph's
		{"a toolbar and line numbers", "& .ln{user-select:none;-webkit-user-select:none;margin-right:8px} & .line{display:block}",
			`<div class="cb"><pre class="language-go"><div role="toolbar"><span>Copy code</span></div><code><span class="line"><span class="ln">1</span>package main</span><span class="line"><span class="ln">2</span>func main() {}</span></code></pre></div>`,
			"```go\npackage main\nfunc main() {}\n```",
			"package main\nfunc main() {}", "", ""},
		{"a header inside pre with blank lines", "",
			"<pre><div class=\"bar\"><span>bash</span><button>Copy</button></div>\n\n<code>echo hi</code></pre>",
			"```bash\necho hi\n```",
			"echo hi", "", ""},
		{"a header just before the block among other blocks", "& .hd{display:flex}",
			`<p>Intro.</p><div class="hd"><span>go</span><button>Copy</button></div><pre><code class="language-go">x := 1</code></pre><p>Then:</p><div class="hd"><span>python</span></div><pre><code class="language-python">print(1)</code></pre>`,
			"Intro.\n\n```go\nx := 1\n```\n\nThen:\n\n```python\nprint(1)\n```",
			"Intro.\n\nx := 1\n\nThen:\n\nprint(1)", "", ""},
		{"a header beside Copy names a block without a language", "",
			`<div class="hd"><span>bash</span><button>Copy</button></div><pre><code>echo hi</code></pre><p>Done.</p><pre><code>second</code></pre>`,
			"```bash\necho hi\n```\n\nDone.\n\n```\nsecond\n```",
			"echo hi\n\nDone.\n\nsecond", "", ""},
		{"emphasis drawn by style", "& .b{font-weight:700} & .i{font-style:italic} & h3{font-weight:700}",
			`<p>A <span class="b">bold</span> and an <span class="i">italic</span> word, <strong>strong</strong> as it is.</p><h3>Heading</h3>`,
			"A **bold** and an *italic* word, **strong** as it is.\n\n### Heading",
			"A bold and an italic word, strong as it is.\n\nHeading", "", ""},
		{"links drawn as a button and as role=link", "& .lk{color:blue;cursor:pointer;user-select:none}",
			`<p>Read the <button class="lk" data-href="https://example.com/docs">docs</button> first, or <span class="lk" role="link" tabindex="0">the guide</span>.</p><p><button>Regenerate</button></p>`,
			"Read the [docs](https://example.com/docs) first, or the guide.",
			"Read the docs first, or the guide.", "", ""},
		{"thinking as plain pre-wrap text keeps its lines", "& .tb{white-space:pre-wrap}",
			"<details><summary>已深度思考</summary><div class=\"tb\">First, the question.\n- step one\n- step two</div></details><p>Answer.</p>",
			"Answer.", "Answer.", "First, the question.\n- step one\n- step two", ""},
		{"a paragraph named like a language stays", "",
			"<p>go</p><pre><code class=\"language-go\">x := 1</code></pre>",
			"go\n\n```go\nx := 1\n```",
			"go\n\nx := 1", "", ""},
		{"thinking in a closed details 已深度思考", "",
			"<details class=\"t\"><summary>已深度思考（用时 8 秒）</summary><p>用户想要一个<strong>标题</strong>。</p><ul><li>先列要点</li></ul></details><h2>标题</h2><p>正文。</p>",
			"## 标题\n\n正文。", "标题\n\n正文。", "用户想要一个**标题**。\n\n- 先列要点", ""},
		{"thinking behind a Thought toggle, open", "",
			"<button aria-expanded=\"true\">Thought for 8 seconds</button><div class=\"th\"><p>The user wants a list.</p></div><ul><li>one</li><li>two</li></ul>",
			"- one\n- two", "one\ntwo", "The user wants a list.", ""},
		{"thinking under a header toggle, collapsed", "& .body[hidden]{display:none}",
			"<div class=\"hd\"><span role=\"button\" aria-expanded=\"false\">Thinking</span><span>8s</span></div><div class=\"body\" hidden><p>Plan: greet.</p></div><p>Hello.</p>",
			"Hello.", "Hello.", "Plan: greet.", ""},
		{"thinking by the site's key, no label", "",
			"<div class=\"reasoning\"><p>Why: because.</p></div><p>The answer.</p>",
			"The answer.", "The answer.", "Why: because.", ".reasoning"},
		{"a button about thinking that holds the answer is not a block", "",
			"<p>Thinking about it: yes.</p>",
			"Thinking about it: yes.", "Thinking about it: yes.", "", ""},
	}
	// A result that lost what the page shows is never verified: the link
	// drawn as a button is the page's text, not chrome the check drops.
	lossy := map[string]string{"links drawn as a button and as role=link": "Read the first, or ."}
	var page strings.Builder
	for i, c := range cases {
		fmt.Fprintf(&page, "<style>%s</style><div id=\"a%d\">%s</div>\n", strings.ReplaceAll(c.css, "&", fmt.Sprintf("#a%d", i)), i, c.html)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><meta charset=\"utf-8\"><body>"+page.String()+"</body>")
	}))
	t.Cleanup(srv.Close)
	ctx := tab(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		d := newDriver(config.SiteConfig{URL: srv.URL, Answer: fmt.Sprintf("#a%d", i), Thinking: c.key}, "rules", Timings{}, nil)
		md, _, think, err := d.readOne(ctx, MethodDOM, nil, nil)
		if err != nil {
			t.Fatalf("%s: dom: %v", c.name, err)
		}
		if md != c.md {
			t.Errorf("%s: dom\n got %q\nwant %q", c.name, md, c.md)
		}
		if think != c.think {
			t.Errorf("%s: thinking\n got %q\nwant %q", c.name, think, c.think)
		}
		text, _, _, err := d.readOne(ctx, MethodText, nil, nil)
		if err != nil {
			t.Fatalf("%s: text: %v", c.name, err)
		}
		if text != c.text {
			t.Errorf("%s: text\n got %q\nwant %q", c.name, text, c.text)
		}
		if chk, _ := d.pageCheck(ctx, md, FormatMarkdown); chk.State != CheckVerified {
			t.Errorf("%s: the dom result is %s against the page: %s", c.name, chk.State, chk.Diff)
		}
		if l, ok := lossy[c.name]; ok {
			if chk, _ := d.pageCheck(ctx, l, FormatMarkdown); chk.State != CheckDiffers {
				t.Errorf("%s: a result that lost words of the page is %s: %s", c.name, chk.State, chk.Diff)
			}
		}
	}
}
