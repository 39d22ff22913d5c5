package chatstand

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spoolgate/spoolgate/internal/testkit"
)

// recorder keeps each Write of a response apart, as the network sees them.
type recorder struct {
	mu     sync.Mutex
	header http.Header
	code   int
	writes [][]byte
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(c int)   { r.code = c }
func (r *recorder) Flush()              {}
func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

// sendSSE posts content the way the page does and returns the response.
func sendSSE(t *testing.T, s *Server, tok, query, body string) *recorder {
	t.Helper()
	req := httptest.NewRequest("POST", "/api/conversation"+query, strings.NewReader(body))
	req.AddCookie(&http.Cookie{Name: SessionCookie, Value: tok})
	rec := &recorder{header: http.Header{}, code: 200}
	s.handleConversation(rec, req)
	return rec
}

// events are the data of a recorded stream's events, bytes joined first.
func events(t *testing.T, rec *recorder) []string {
	t.Helper()
	all := bytes.Join(rec.writes, nil)
	if !utf8.Valid(all) {
		t.Fatalf("the stream is not UTF-8: %q", all)
	}
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(string(all), "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("event %q is not one data line", ev)
		}
		out = append(out, data)
	}
	return out
}

// Every corpus answer, in both stream shapes, joins up to exactly
// MarkdownFor; events with CJK or emoji are written cut inside a character.
func TestServer_SSECorpus(t *testing.T) {
	s := start(t, Options{Scale: 0.001, Renderer: "plain"})
	tok := s.Login("demo")
	if len(Corpus()) < 10 {
		t.Fatalf("corpus of %d answers, want >= 10", len(Corpus()))
	}
	cut := 0
	for _, name := range Corpus() {
		for _, query := range []string{"", "?stream=full"} {
			content := "[[md=" + name + "]]"
			body, _ := json.Marshal(map[string]string{"content": content})
			rec := sendSSE(t, s, tok, query, string(body))
			if ct := rec.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") || rec.code != 200 {
				t.Fatalf("%s%s: %d %s", name, query, rec.code, ct)
			}
			for _, w := range rec.writes {
				if !utf8.Valid(w) {
					cut++
				}
			}
			evs := events(t, rec)
			var meta map[string]string
			if err := json.Unmarshal([]byte(evs[0]), &meta); err != nil || meta["type"] != "meta" || meta["url"] != "/c/"+meta["conversation"] {
				t.Fatalf("%s: first event %s", name, evs[0])
			}
			if evs[len(evs)-1] != "[DONE]" {
				t.Fatalf("%s: last event %s", name, evs[len(evs)-1])
			}
			got := ""
			for _, e := range evs[1 : len(evs)-1] {
				var v map[string]string
				if err := json.Unmarshal([]byte(e), &v); err != nil {
					t.Fatalf("%s: event %s: %v", name, e, err)
				}
				if query == "" {
					got += v["delta"]
				} else {
					got = v["text"]
				}
			}
			if want := MarkdownFor(content); got != want {
				t.Errorf("%s%s: streamed %q, want %q", name, query, got, want)
			}
			if c, _ := s.Conversation(meta["conversation"]); len(c.Turns) != 1 || c.Turns[0].State != TurnDone || c.Turns[0].Answer != MarkdownFor(content) || c.Turns[0].DoneSent.Before(c.Turns[0].EndedAt) || c.Turns[0].EndedAt.IsZero() {
				t.Errorf("%s: server's conversation %+v", name, c)
			}
		}
	}
	if cut == 0 {
		t.Error("no write was cut inside a character")
	}
}

// A stream that comes after its turn began (a reattach, or the page's own
// request on a busy machine) catches up with the thinking so far and the
// answer so far, one event each, in both stream shapes: CI once read a
// reasoning answer whose thinking the catch-up had dropped.
func TestServer_SSECatchUp(t *testing.T) {
	s := start(t, Options{Scale: 0.001, Renderer: "marked", Reasoning: ReasoningField})
	tok := s.Login("demo")
	content := "[[md=cjk]] catch up"
	modes := Modes{DeepThink: true, Model: ModelV3}
	body, _ := json.Marshal(map[string]any{"content": content, "modes": modes})
	meta := map[string]string{}
	if err := json.Unmarshal([]byte(events(t, sendSSE(t, s, tok, "", string(body)))[0]), &meta); err != nil {
		t.Fatal(err)
	}
	for _, query := range []string{"", "?stream=full"} {
		req := httptest.NewRequest("GET", "/api/conversation/"+meta["conversation"]+"/stream"+query, nil)
		req.SetPathValue("id", meta["conversation"])
		req.AddCookie(&http.Cookie{Name: SessionCookie, Value: tok})
		rec := &recorder{header: http.Header{}, code: 200}
		s.handleAttach(rec, req)
		var think, answer string
		evs := events(t, rec)
		for _, e := range evs[1 : len(evs)-1] {
			var v map[string]string
			if err := json.Unmarshal([]byte(e), &v); err != nil {
				t.Fatalf("event %s: %v", e, err)
			}
			think += v["reasoning"] + v["reasoningText"]
			answer += v["delta"] + v["text"]
		}
		if want := ThinkingFor(content, modes); think != want || want == "" {
			t.Errorf("%q: caught-up thinking %q, want %q", query, think, want)
		}
		if want := MarkdownFor(content); answer != want {
			t.Errorf("%q: caught-up answer %q, want %q", query, answer, want)
		}
		if len(evs) != 4 {
			t.Errorf("%q: %d events, want meta, thinking, answer, [DONE]: %q", query, len(evs), evs)
		}
	}
}

// The error turn ends with an error event; an empty answer with none; a
// second send while one generates is refused; SendsOf counts sends.
func TestServer_SSETurns(t *testing.T) {
	s := start(t, Options{Scale: 0.001, Renderer: "plain"})
	tok := s.Login("demo")
	evs := events(t, sendSSE(t, s, tok, "", `{"content":"[[errorturn]] x"}`))
	if len(evs) != 3 || !strings.Contains(evs[1], ErrTurn) || evs[2] != "[DONE]" {
		t.Errorf("error turn: %q", evs)
	}
	evs = events(t, sendSSE(t, s, tok, "", `{"content":"[[empty]] y"}`))
	if len(evs) != 2 || evs[1] != "[DONE]" {
		t.Errorf("empty answer: %q", evs)
	}
	if n := s.SendsOf("[[empty]] y"); n != 1 {
		t.Errorf("SendsOf = %d, want 1", n)
	}
	// A generation holds the account until it has ended, page or no page.
	done := make(chan struct{})
	go func() {
		defer close(done)
		sendSSE(t, s, tok, "", `{"content":"[[duration=100s]] long"}`)
	}()
	testkit.Wait(t, "the long generation", 5*time.Second, func() bool { return s.Active() == 1 })
	if rec := sendSSE(t, s, tok, "", `{"content":"second"}`); rec.code != http.StatusConflict {
		t.Errorf("a second generation: %d, want 409", rec.code)
	}
	<-done
	if s.SendsOf("second") != 1 || s.GenerationsOf("second") != 0 {
		t.Errorf("a refused send: SendsOf %d GenerationsOf %d, want 1 and 0", s.SendsOf("second"), s.GenerationsOf("second"))
	}
	// Regenerating the last answer replaces it and counts as a send.
	c := s.Conversations("demo")[0]
	if c.Turns[0].Content != "[[duration=100s]] long" {
		t.Fatalf("newest conversation %+v of %+v", c, s.Conversations(""))
	}
	sendSSE(t, s, tok, "", `{"conversation":"`+c.ID+`","regenerate":true}`)
	if n := s.SendsOf("[[duration=100s]] long"); n != 2 {
		t.Errorf("after a regenerate SendsOf = %d, want 2", n)
	}
	if c2, _ := s.Conversation(c.ID); len(c2.Turns) != 1 || c2.Turns[0].State != TurnDone {
		t.Errorf("after a regenerate %+v", c2)
	}
	if rec := sendSSE(t, s, tok, "", `{"conversation":"nope","content":"z"}`); rec.code != http.StatusNotFound {
		t.Errorf("an unknown conversation: %d", rec.code)
	}
}

// NDJSON: one JSON object a line, {"type":"done"} at the end.
func TestServer_NDJSON(t *testing.T) {
	s := start(t, Options{Scale: 0.001, Renderer: "plain", NDJSON: true})
	rec := sendSSE(t, s, s.Login("demo"), "", `{"content":"[[md=emoji-table]]"}`)
	if ct := rec.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-ndjson") {
		t.Fatalf("Content-Type %s", ct)
	}
	lines := strings.Split(strings.TrimSuffix(string(bytes.Join(rec.writes, nil)), "\n"), "\n")
	if lines[len(lines)-1] != `{"type":"done"}` || !strings.Contains(lines[0], `"type":"meta"`) {
		t.Fatalf("first %s, last %s", lines[0], lines[len(lines)-1])
	}
	got := ""
	for _, l := range lines[1 : len(lines)-1] {
		var v map[string]string
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		got += v["delta"]
	}
	if want := MarkdownFor("[[md=emoji-table]]"); got != want {
		t.Errorf("streamed %q, want %q", got, want)
	}
}
