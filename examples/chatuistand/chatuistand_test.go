package chatuistand

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T, ui string) *Server {
	t.Helper()
	s, err := Start(Options{UI: ui, Step: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// The plain stream joined is the answer; the bot records the text.
func TestServer_Stream(t *testing.T) {
	s := start(t, "nlux")
	res := post(t, s.URL()+"api/chat", `{"text":"héllo wörld 🚀"}`)
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := AnswerFor("héllo wörld 🚀")
	if string(b) != want {
		t.Errorf("stream %q, want %q", b, want)
	}
	if got := s.Received(); len(got) != 1 || got[0].Text != "héllo wörld 🚀" || got[0].Answer != want {
		t.Errorf("received %+v", got)
	}
}

// deep-chat's own request body and its SSE stream of {"text"} pieces.
func TestServer_SSE(t *testing.T) {
	s := start(t, "deepchat")
	res := post(t, s.URL()+"api/chat?sse=1", `{"messages":[{"role":"ai","text":"earlier"},{"role":"user","text":"hello"}]}`)
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	var joined strings.Builder
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct{ Text string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		joined.WriteString(ev.Text)
	}
	if joined.String() != AnswerFor("hello") {
		t.Errorf("events joined %q", joined.String())
	}
}

func TestServer_BadRequests(t *testing.T) {
	s := start(t, "chatui")
	for _, body := range []string{`not json`, `{}`, `{"messages":[{"role":"ai","text":"x"}]}`} {
		if res := post(t, s.URL()+"api/chat", body); res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d", body, res.StatusCode)
		}
	}
	if len(s.Received()) != 0 {
		t.Errorf("a bad request was recorded")
	}
	if _, err := Start(Options{UI: "nosuch"}); err == nil {
		t.Error("an unknown UI started")
	}
	for _, ui := range UIs {
		if _, err := bundles.ReadFile("bundles/" + ui + ".js"); err != nil {
			t.Errorf("%s: no bundle: %v", ui, err)
		}
	}
}

func TestPieces(t *testing.T) {
	for _, s := range []string{"", "one", "one two three four five six seven"} {
		if got := strings.Join(pieces(s, 3), ""); got != s {
			t.Errorf("pieces(%q) joined %q", s, got)
		}
	}
}

// A reasoning page's stream: OpenAI-style chunks, the thinking's
// reasoning_content first, then the answer's content, then [DONE]; the
// bot records both.
func TestServer_Reasoning(t *testing.T) {
	s := start(t, "antdx")
	res := post(t, s.URL()+"api/chat?sse=openai", `{"text":"a short doc 🚀"}`)
	var think, ans strings.Builder
	done := false
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			continue
		}
		var ev struct {
			Choices []struct {
				Delta struct {
					Content          string `json:"content"`
					ReasoningContent string `json:"reasoning_content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil || len(ev.Choices) != 1 {
			t.Fatalf("event %q: %v", line, err)
		}
		if d := ev.Choices[0].Delta; d.ReasoningContent != "" && ans.Len() > 0 {
			t.Errorf("thinking after the answer began: %q", line)
		}
		think.WriteString(ev.Choices[0].Delta.ReasoningContent)
		ans.WriteString(ev.Choices[0].Delta.Content)
	}
	if !done || think.String() != ThinkingFor("a short doc 🚀") || ans.String() != MarkdownAnswerFor("a short doc 🚀") {
		t.Errorf("done %v, thinking %q, answer %q", done, think.String(), ans.String())
	}
	if got := s.Received(); len(got) != 1 || got[0].Thinking != think.String() || got[0].Answer != ans.String() {
		t.Errorf("received %+v", got)
	}
	for _, ui := range ReasoningUIs {
		if _, err := bundles.ReadFile("bundles/" + ui + ".js"); err != nil {
			t.Errorf("%s: no bundle: %v", ui, err)
		}
	}
}
