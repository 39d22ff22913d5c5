package browser

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spoolgate/spoolgate/spool/config"
	"golang.org/x/text/encoding/simplifiedchinese"
)

func TestNetSpec_Extract(t *testing.T) {
	openai := NetSpec{URL: "/api", Format: NetSSE, Path: "choices.0.delta.content"}
	for _, c := range []struct {
		name string
		spec NetSpec
		body string
		want string
		err  bool
	}{
		{"sse deltas", openai, "data: {\"choices\":[{\"delta\":{\"content\":\"## Hi\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"\\n\\n中文 🚀\"}}]}\n\ndata: [DONE]\n\n", "## Hi\n\n中文 🚀", false},
		{"sse CRLF, comments, other fields, no space", openai, ": ping\r\nevent: delta\r\ndata:{\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\r\n\r\nid: 2\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\r\n\r\n", "ab", false},
		{"sse metadata events skipped", openai, "data: {\"id\":\"x\"}\n\ndata: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"ok\"}}]}\n\n", "ok", false},
		{"sse last event without its blank line", openai, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}", "ab", false},
		{"sse multi-line data", NetSpec{Format: NetSSE, Path: "t"}, "data: {\"t\":\ndata: \"x\"}\n\n", "x", false},
		{"sse full text so far", NetSpec{Format: NetSSE, Path: "message.content.parts.0", Mode: NetFull}, "data: {\"message\":{\"content\":{\"parts\":[\"Hel\"]}}}\n\ndata: {\"message\":{\"content\":{\"parts\":[\"Hello [a](b)\"]}}}\n\n", "Hello [a](b)", false},
		{"ndjson", NetSpec{Format: NetNDJSON, Path: "message.content"}, "{\"message\":{\"content\":\"a\"}}\n{\"message\":{\"content\":\"b\"},\"done\":false}\n{\"done\":true}\n", "ab", false},
		{"text", NetSpec{Format: NetText}, "# Title\n\nbody", "# Title\n\nbody", false},
		{"no text at the path", openai, "data: {\"x\":1}\n\n", "", true},
		{"a number is not text", NetSpec{Format: NetNDJSON, Path: "n"}, "{\"n\":3}\n", "", true},
		{"not UTF-8", NetSpec{Format: NetText}, "a\xffb", "", true},
	} {
		got, err := extract(c.spec, []byte(c.body))
		if (err != nil) != c.err || got != c.want {
			t.Errorf("%s: %q, %v; want %q, error %v", c.name, got, err, c.want, c.err)
		}
	}
}

// A character split over two chunks survives: chunks are joined before
// the body is decoded.
func TestNetSpec_Extract_SplitChunks(t *testing.T) {
	body := []byte("data: {\"t\":\"中文🚀\"}\n\n")
	spec := NetSpec{Format: NetSSE, Path: "t"}
	for cut := 1; cut < len(body); cut++ {
		got, err := extract(spec, joinChunks([][]byte{body[:cut], body[cut:]}))
		if err != nil || got != "中文🚀" {
			t.Fatalf("cut at %d: %q, %v", cut, got, err)
		}
	}
}

func TestNetSpec_Check(t *testing.T) {
	for _, c := range []struct {
		spec NetSpec
		want string
	}{
		{NetSpec{URL: "/a", Format: NetSSE, Path: "x"}, ""},
		{NetSpec{URL: "/a", Format: NetText}, ""},
		{NetSpec{Format: NetSSE, Path: "x"}, "url: missing"},
		{NetSpec{URL: "/a", Format: NetSSE}, "path: missing"},
		{NetSpec{URL: "/a", Format: "xml"}, `format: "xml"`},
		{NetSpec{URL: "/a", Format: NetText, Path: "x"}, "path: a text body"},
		{NetSpec{URL: "/a", Format: NetNDJSON, Path: "x", Mode: "all"}, `mode: "all"`},
	} {
		err := c.spec.Check()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}

// A stream body is the page's, not the user's, but it reaches a parser
// all the same: it never panics, and what it returns is UTF-8.
func FuzzNetSpec_Extract(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"), "choices.0.delta.content", uint8(0))
	f.Add([]byte("{\"a\":[\"x\"]}\n"), "a.0", uint8(1))
	f.Add([]byte("data: {\"v\":[{\"v\":[{\"type\":\"RESPONSE\",\"content\":\"#\"}],\"p\":\"fragments\",\"o\":\"APPEND\"}],\"p\":\"response\",\"o\":\"BATCH\"}\n\ndata: {\"v\":\"x\"}\n\n"), "response.fragments.*.content", uint8(0x88))
	f.Fuzz(func(t *testing.T, body []byte, path string, kind uint8) {
		spec := NetSpec{Format: []string{NetSSE, NetNDJSON, NetText, NetWebSocket}[kind%4], Path: path, Mode: []string{NetDelta, NetFull, NetPatch}[kind/4%3]}
		if kind&0x80 != 0 {
			spec.When, spec.Final = map[string]string{"type": "RESPONSE"}, path
		}
		got, err := extract(spec, body)
		if err == nil && !utf8.ValidString(got) {
			t.Fatalf("not UTF-8: %q", got)
		}
	})
}

func TestAnswerTrack_Take(t *testing.T) {
	d := newDriver(readSiteForUnit(), "u", Timings{}, nil)
	now := time.Now()
	for _, c := range []struct {
		name  string
		reads []string
		ids   []int
		final string
		want  string
	}{
		{"streaming", []string{"Read the", "Read the [full", "Read the [full changelog](https://ex"}, []int{1, 1, 1}, "Read the full changelog.", "Read the full changelog."},
		{"replaced element", []string{"a long answer being written", "short"}, []int{1, 2}, "short", "short"},
		{"virtualised top dropped", []string{"line one of the answer\nline two of the answer\n", "line two of the answer\nline three"}, []int{1, 1}, "line two of the answer\nline three\nend",
			"line one of the answer\nline two of the answer\nline three\nend"},
		{"different text, same element", []string{"Thinking about it now", "Here is the answer"}, []int{1, 1}, "Here is the answer", "Here is the answer"},
	} {
		var tr answerTrack
		for i, r := range c.reads {
			tr.take(r, c.ids[i], now, d)
		}
		if got := tr.whole(c.final); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestOrderMethods(t *testing.T) {
	for _, c := range []struct {
		read          []string
		network, copy bool
		want          string
	}{
		{nil, false, false, "dom text"},
		{nil, true, true, "network copy dom text"},
		{nil, false, true, "copy dom text"},
		{[]string{"copy", "network"}, true, true, "copy network text"},
		{[]string{"text"}, true, true, "text"},
	} {
		if got := strings.Join(orderMethods(c.read, c.network, c.copy), " "); got != c.want {
			t.Errorf("%v %v %v: %s, want %s", c.read, c.network, c.copy, got, c.want)
		}
	}
}

func TestHTMLToMarkdown(t *testing.T) {
	for _, c := range []struct{ html, want string }{
		{"<ol><li>one</li><li>two<ul><li>a</li><li>b</li></ul></li></ol>", "1. one\n2. two\n   - a\n   - b"},
		{`<table><thead><tr><th align="left">l</th><th align="center">c</th><th align="right">r</th></tr></thead><tbody><tr><td>1</td><td>2</td><td>3</td></tr></tbody></table>`, "| l | c | r |\n|:--|:-:|--:|\n| 1 | 2 | 3 |"},
		{`<pre><code class="language-go">x := 1
</code></pre>`, "```go\nx := 1\n```"},
		{"<p><em>i</em> <strong>b</strong> <code>c</code> <a href=\"https://e.x/\">l</a></p>", "*i* **b** `c` [l](https://e.x/)"},
	} {
		got, err := htmlToMarkdown(c.html)
		if err != nil || got != c.want {
			t.Errorf("%s:\n%q, %v\nwant\n%q", c.html, got, err, c.want)
		}
	}
}

func readSiteForUnit() config.SiteConfig {
	return config.SiteConfig{URL: "http://127.0.0.1/", Input: ".i", Send: ".s", Answer: ".a"}
}

// Chromium's text of a body goes back to the bytes it was decoded from:
// windows-1252 (its default, with the C1 bytes it leaves undefined), a
// declared UTF-8 (as it is) and GB18030; text that no windows-1252
// decoding gives stays as it is.
func TestUndecode(t *testing.T) {
	utf := "## 发布说明 🚀 é"
	gb, _ := simplifiedchinese.GB18030.NewEncoder().String(utf)
	as1252 := func(b []byte) []byte {
		var out []rune
		for _, c := range b {
			if c >= 0x80 && c < 0xA0 {
				out = append(out, win1252[c-0x80])
			} else {
				out = append(out, rune(c))
			}
		}
		return []byte(string(out))
	}
	for _, c := range []struct {
		name, charset string
		text          []byte
		want          []byte
		ok            bool
	}{
		{"default 1252", "", as1252([]byte(utf)), []byte(utf), true},
		{"every byte", "", as1252(allBytes()), allBytes(), true},
		{"declared latin1", "iso-8859-1", as1252([]byte(utf)), []byte(utf), true},
		{"declared utf-8", "UTF-8", []byte(utf), []byte(utf), true},
		{"gb18030", "gb18030", []byte(utf), []byte(gb), true},
		{"already utf-8", "", []byte(utf), []byte(utf), false},
		{"unknown charset", "x-klingon", []byte("abc"), []byte("abc"), false},
	} {
		got, ok := undecode(c.text, c.charset)
		if ok != c.ok || !bytes.Equal(got, c.want) {
			t.Errorf("%s: undecode = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// A body becomes UTF-8 text by its format: SSE is UTF-8 whatever the
// header says; JSON lines and text honour a declared charset.
func TestBodyText(t *testing.T) {
	utf := `{"t":"发布说明 🚀"}`
	gb, _ := simplifiedchinese.GB18030.NewEncoder().String(utf)
	for _, c := range []struct {
		name     string
		raw      string
		sse      bool
		declared string
		want     string
	}{
		{"sse, no charset", utf, true, "", utf},
		{"sse says gbk", utf, true, "gbk", utf},
		{"ndjson gb18030", gb, false, "gb18030", utf},
		{"ndjson gbk label", gb, false, "GBK", utf},
		{"text utf-8", utf, false, "utf-8", utf},
		{"text, no charset", utf, false, "", utf},
	} {
		if got := string(bodyText([]byte(c.raw), c.sse, strings.ToLower(c.declared))); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := declaredCharset(`text/plain; charset="GB18030"`); got != "gb18030" {
		t.Errorf("declaredCharset = %q", got)
	}
}
