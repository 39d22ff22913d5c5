package markdown

import (
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // substrings of the HTML
		not       []string
	}{
		{"structure", "# Title\n\n- one\n- two\n\n| a | b |\n|---|--:|\n| 1 | 2 |\n\n```go\nfunc main() {}\n```\n",
			[]string{"<h1>Title</h1>", "<li>one</li>", "<table>", `<td style="text-align:right">2</td>`, `<code class="language-go">func main() {}`}, nil},
		{"raw html off", "hi <script>alert(1)</script> <img src=x onerror=alert(1)>\n\n<div onclick=x>block</div>\n",
			[]string{"hi "}, []string{"<script", "<img", "onerror", "<div"}},
		{"javascript link", "[click](javascript:alert(1)) and [rel](/etc/passwd) and [data](data:text/html,x)",
			[]string{"click and rel and data"}, []string{"<a", "javascript"}},
		{"case and space tricks", "[a](JaVaScRiPt:alert(1)) [b]( javascript:x) [c](vbscript:x) [d](file:///etc/passwd)",
			[]string{"a b c d"}, []string{"<a", "script:"}},
		{"allowed links", "[site](https://example.com/a?b=1) <https://x.example/> <me@example.com> [m](mailto:a@example.com)",
			[]string{`<a href="https://example.com/a?b=1" rel="nofollow noopener noreferrer">site</a>`, `href="https://x.example/"`, `href="mailto:me@example.com"`, `href="mailto:a@example.com"`}, nil},
		{"images load nothing", "![logo](https://example.com/l.png) ![bad](javascript:x)",
			[]string{`<a href="https://example.com/l.png" rel="nofollow noopener noreferrer">logo</a>`, "bad"}, []string{"<img", "javascript"}},
		{"entities", "a & b < c \"q\"", []string{"a &amp; b &lt; c &quot;q&quot;"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := Render(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			s := string(h)
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Errorf("want %q in\n%s", w, s)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(strings.ToLower(s), strings.ToLower(n)) {
					t.Errorf("%q must not appear in\n%s", n, s)
				}
			}
		})
	}
}

// A task page's own files: its saved images shown, its other files
// linked; a relative address it does not serve (another task's, or one
// that only starts like its own) stays text, as in Render.
func TestRenderOwn(t *testing.T) {
	own := Own{"/task/web/t/file/01.png": true, "/task/web/t/file/02.csv": false, "/task/web/t/file/03.pdf": false}
	h, err := RenderOwn("![Chart 1](/task/web/t/file/01.png) [data](/task/web/t/file/02.csv) ![pdf](/task/web/t/file/03.pdf) ![other](/task/web/u/file/01.png) [x](/task/web/t/file/01.pngx) ![far](https://example.com/i.png)", own)
	if err != nil {
		t.Fatal(err)
	}
	s := string(h)
	for _, w := range []string{`<img src="/task/web/t/file/01.png" alt="Chart 1">`, `<a href="/task/web/t/file/02.csv">data</a>`,
		`<a href="/task/web/t/file/03.pdf" rel="nofollow noopener noreferrer">pdf</a>`, " other x ", `<a href="https://example.com/i.png" rel="nofollow noopener noreferrer">far</a>`} {
		if !strings.Contains(s, w) {
			t.Errorf("want %q in\n%s", w, s)
		}
	}
	for _, n := range []string{`/task/web/u`, "01.pngx", `<img src="https`} {
		if strings.Contains(s, n) {
			t.Errorf("%q must not appear in\n%s", n, s)
		}
	}
}

func FuzzRender(f *testing.F) {
	f.Add("[x](javascript:alert(1)) <script>y</script> ![i](data:image/png;base64,AAAA)")
	f.Fuzz(func(t *testing.T, src string) {
		h, err := Render(src)
		if err != nil {
			return
		}
		s := strings.ToLower(string(h))
		for _, bad := range []string{"<script", "<img", "<iframe", "<style", "<svg", "<object"} {
			if strings.Contains(s, bad) {
				t.Fatalf("%q rendered %q", src, h)
			}
		}
		for rest := s; ; {
			i := strings.Index(rest, `href="`)
			if i < 0 {
				break
			}
			rest = rest[i+6:]
			if !strings.HasPrefix(rest, "http://") && !strings.HasPrefix(rest, "https://") && !strings.HasPrefix(rest, "mailto:") {
				t.Fatalf("%q rendered a link to %.40q", src, rest)
			}
		}
	})
}
