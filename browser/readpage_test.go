//go:build linux

package browser

import (
	"cmp"
	"encoding/json"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spoolgate/spoolgate/internal/testkit"
)

// readPage is a small chat page of the reading tests, on 127.0.0.1: it
// streams a Markdown answer over SSE (fetch and a ReadableStream, as the
// big chat sites do), and with each piece the answer's HTML so far as a
// real Markdown renderer (goldmark, GFM) renders that prefix: a link
// streams as its literal source, then renders shorter. Code blocks get a
// header with their language and a Copy button inside the answer; an
// action bar with the answer's copy button shows only under a finished
// answer. Directives in the message:
//
//	[[pause=D]]  stop streaming half-way for D (busy stays on)
//	[[error]]    an error turn ("Something went wrong" and Retry)
//	[[empty]]    an answer with no text
//	[[exec]]     the copy button copies with execCommand('copy')
//	[[replace]]  the page replaces the answer element at its end
//	[[lie]]      the page shows "说明" as "说名": not what it streamed
//	[[late]]     the page shows the answer's source while it streams and
//	             renders it only when the test calls window.renderNow()
//	[[typeout=Nms]] the page shows nothing while it streams; once the
//	             response has ended (busy gone) it types the answer out,
//	             stalling N ms half-way, as chat kits that animate do
type readPage struct {
	srv     *http.Server
	url     string
	mu      sync.Mutex
	answers map[string]string // message -> Markdown answer
	ctype   string            // the stream's Content-Type (default: text/event-stream, no charset)
	ended   []time.Time       // when each stream's last byte was written
}

func startReadPage(t *testing.T) *readPage {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &readPage{url: "http://" + ln.Addr().String() + "/", answers: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(readPageHTML))
	})
	mux.HandleFunc("/api/chat", p.chat)
	p.srv = &http.Server{Handler: mux}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() { _ = p.srv.Close() })
	return p
}

func (p *readPage) set(msg, md string) {
	p.mu.Lock()
	p.answers[msg] = md
	p.mu.Unlock()
}

// renderMD renders Markdown as the page shows it: code blocks under a
// header with the language label and a Copy button.
func renderMD(md string) string {
	return codeHead.ReplaceAllString(testkit.MarkdownHTML(md), `<div class="code"><div class="code-head"><span class="lang">$1</span><button class="copy-code">Copy</button></div><pre><code class="language-$1">`)
}

var codeHead = regexp.MustCompile(`<pre><code class="language-([\w+-]+)">`)

// pieces splits an answer into stream pieces of a few characters.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		k := 0
		for i := 0; i < n && k < len(s); i++ {
			_, sz := utf8.DecodeRuneInString(s[k:])
			k += sz
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func (p *readPage) chat(w http.ResponseWriter, r *http.Request) {
	var req struct{ Content string }
	_ = json.NewDecoder(r.Body).Decode(&req)
	p.mu.Lock()
	md, ok := p.answers[req.Content]
	p.mu.Unlock()
	if !ok {
		md = "You said: " + req.Content
	}
	var pause time.Duration
	if m := regexp.MustCompile(`\[\[pause=(\w+)\]\]`).FindStringSubmatch(req.Content); m != nil {
		pause, _ = time.ParseDuration(m[1])
	}
	p.mu.Lock()
	ctype := cmp.Or(p.ctype, "text/event-stream")
	p.mu.Unlock()
	w.Header().Set("Content-Type", ctype)
	fl := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		ev := []byte("data: " + string(b) + "\n\n")
		// Two writes, split inside a character when there is one: the
		// browser gets a chunk that ends mid-character.
		cut := len(ev) / 2
		for i := 0; i < len(ev); i++ {
			if !utf8.RuneStart(ev[i]) {
				cut = i
				break
			}
		}
		_, _ = w.Write(ev[:cut])
		fl.Flush()
		time.Sleep(time.Millisecond)
		_, _ = w.Write(ev[cut:])
		fl.Flush()
	}
	type delta struct {
		Content string `json:"content"`
	}
	type choice struct {
		Delta delta `json:"delta"`
	}
	event := func(piece, html string) map[string]any {
		return map[string]any{"choices": []choice{{Delta: delta{piece}}}, "html": html}
	}
	switch {
	case strings.Contains(req.Content, "[[error]]"):
		time.Sleep(30 * time.Millisecond)
		send(map[string]any{"errorTurn": true})
	case strings.Contains(req.Content, "[[empty]]"):
		time.Sleep(30 * time.Millisecond)
	default:
		ps := pieces(md, 7)
		so := ""
		for i, piece := range ps {
			so += piece
			shown := so
			if strings.Contains(req.Content, "[[lie]]") {
				shown = strings.ReplaceAll(so, "说明", "说名")
			}
			send(event(piece, renderMD(shown)))
			if pause > 0 && i == len(ps)/2 {
				time.Sleep(pause)
			}
			time.Sleep(4 * time.Millisecond)
		}
	}
	_, _ = w.Write([]byte("data: [DONE]\n\n"))
	fl.Flush()
	p.mu.Lock()
	p.ended = append(p.ended, time.Now())
	p.mu.Unlock()
}

const readPageHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>read page</title>
<style>.code-head{display:flex;gap:8px}.actions{margin:4px 0}</style></head>
<body>
<div id="log"></div>
<textarea class="input"></textarea>
<button class="send" type="button">Send</button>
<button class="stop" style="display:none">Stop</button>
<script>
const log = document.getElementById('log');
const stop = document.querySelector('.stop');
const copyExec = (text) => {
  const ta = document.createElement('textarea');
  ta.value = text; document.body.appendChild(ta); ta.select();
  document.execCommand('copy'); ta.remove();
};
document.querySelector('.send').addEventListener('click', async () => {
  const input = document.querySelector('.input');
  const text = input.value; input.value = '';
  const u = document.createElement('div'); u.className = 'msg user'; u.textContent = text; log.appendChild(u);
  const turn = document.createElement('div'); turn.className = 'turn'; log.appendChild(turn);
  let a = document.createElement('div'); a.className = 'msg assistant'; turn.appendChild(a);
  stop.style.display = '';
  const r = await fetch('/api/chat', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({content: text})});
  const rd = r.body.getReader(); const dec = new TextDecoder();
  let buf = '', md = '', err = false, html = '';
  const late = text.includes('[[late]]');
  const typeout = /\[\[typeout=(\d+)ms\]\]/.exec(text);
  const shots = [];
  for (;;) {
    const {value, done} = await rd.read();
    if (done) break;
    buf += dec.decode(value, {stream: true});
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, i); buf = buf.slice(i + 2);
      for (const line of ev.split('\n')) {
        if (!line.startsWith('data: ')) continue;
        const d = line.slice(6);
        if (d === '[DONE]') continue;
        const j = JSON.parse(d);
        if (j.errorTurn) { err = true; a.innerHTML = '<p>Something went wrong. Please try again.</p><button class="retry">Retry</button>'; }
        if (j.choices) md += j.choices[0].delta.content;
        if (j.html !== undefined) { html = j.html; if (typeout) shots.push(html); else if (late) a.textContent = md; else a.innerHTML = html; }
      }
    }
  }
  if (text.includes('[[replace]]')) {
    const n = document.createElement('div'); n.className = 'msg assistant'; n.innerHTML = a.innerHTML; a.replaceWith(n); a = n;
  }
  stop.style.display = 'none';
  if (typeout) {
    const nap = (ms) => new Promise((ok) => setTimeout(ok, ms));
    for (let i = 0; i < shots.length; i++) {
      a.innerHTML = shots[i];
      await nap(i === (shots.length >> 1) ? +typeout[1] : 5);
    }
  }
  if (late) window.renderNow = () => { a.innerHTML = html; };
  if (err) return;
  const bar = document.createElement('div'); bar.className = 'actions';
  const c = document.createElement('button'); c.className = 'copy'; c.textContent = 'Copy';
  c.addEventListener('click', () => text.includes('[[exec]]') ? copyExec(md) : navigator.clipboard.writeText(md));
  const g = document.createElement('button'); g.className = 'regenerate'; g.textContent = 'Regenerate';
  bar.append(c, g); turn.appendChild(bar);
});
</script>
</body></html>`

// readCorpus is Markdown of every kind the tests need: headings, nested
// lists, fenced code with a language, a GFM table with alignment, links,
// a blockquote, emphasis, inline code, CJK and emoji, and a link and a
// table at the very end (the shrink at the end).
var readCorpus = map[string]string{
	"changelog": "## What changed\n\nThe **dashboard** now loads *twice* as fast; see `spoolgate status`.\n\n1. First step\n2. Second step\n   - nested bullet\n   - another one\n3. Third step\n\n> A quote from the team.\n\nRead the [full changelog](https://example.com/spoolgate/changelog).",
	"code":      "# Build\n\nRun this:\n\n```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n\nThen `make test`.",
	"table":     "### Timings\n\n| lane | before | after |\n|:-----|:------:|------:|\n| web | 12 s | 8 s |\n| api | 3 s | 2 s |",
	"cjk":       "## 发布说明 🚀\n\n- 第一项：**加粗**文字\n- 第二项 *斜体* 😀\n\n结尾链接 [文档](https://example.com/文档)",
}

func assertSameMarkdown(t *testing.T, what, got, want string) {
	t.Helper()
	if g, w := testkit.MarkdownHTML(got), testkit.MarkdownHTML(want); g != w {
		t.Errorf("%s: the Markdown differs\ngot:\n%s\nwant:\n%s\ngot renders:\n%s\nwant renders:\n%s", what, got, want, g, w)
	}
}
