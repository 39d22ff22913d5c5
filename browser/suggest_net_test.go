package browser

import (
	"strings"
	"testing"
)

func TestBestNet(t *testing.T) {
	const shown = "Hello there. This is **the** answer, in two lines.\nThe end."
	openai := "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n" +
		"data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"Hello there. This is \"}}]}\n\n" +
		"data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"**the** answer, in two lines.\\nThe end.\"}}]}\n\n" +
		"data: [DONE]\n\n"
	full := "{\"message\":{\"parts\":[\"Hello there.\"]},\"status\":\"in_progress\"}\n" +
		"{\"message\":{\"parts\":[\"Hello there. This is **the** answer, in two lines.\\nThe end.\"]},\"status\":\"finished_successfully\"}\n"
	reasoning := sseOf([2]string{"reasoning_content", "The user greets me; I will answer "}, [2]string{"reasoning_content", "with a short greeting and two lines."},
		[2]string{"content", "Hello there. This is "}, [2]string{"content", "**the** answer, in two lines.\nThe end."})
	end := func(url, body string) netState {
		return netState{URL: url, Seen: true, Ended: true, Body: []byte(body)}
	}
	tests := []struct {
		name  string
		all   []netState
		want  NetSpec
		match bool
	}{
		{"plain text body", []netState{end("http://127.0.0.1:1/api/chat", shown)}, NetSpec{URL: "/api/chat", Format: NetText}, true},
		{"OpenAI-style SSE deltas", []netState{end("http://h/v1/chat/completions?x=1", openai)}, NetSpec{URL: "/v1/chat/completions", Format: NetSSE, Path: "choices.0.delta.content"}, true},
		{"JSON lines, the whole text so far", []netState{end("http://h/backend/conversation", full)}, NetSpec{URL: "/backend/conversation", Format: NetNDJSON, Path: "message.parts.0", Mode: NetFull}, true},
		{"the answer's response among others", []netState{end("http://h/api/title", `{"title":"Greeting"}`), end("http://h/api/chat", shown), end("http://h/api/log", "ok")}, NetSpec{URL: "/api/chat", Format: NetText}, true},
		{"a request to the root keeps its query", []netState{end("http://h/?op=chat", shown)}, NetSpec{URL: "/?op=chat", Format: NetText}, true},
		{"a thinking field and an answer field: the answer is the answer field", []netState{end("http://h/api/chat", reasoning)},
			NetSpec{URL: "/api/chat", Format: NetSSE, Path: "choices.0.delta.content", Reasoning: "choices.0.delta.reasoning_content"}, true},
		{"the page's thinking block taken for the answer: still the answer field", []netState{end("http://h/api/chat", reasoning)},
			NetSpec{URL: "/api/chat", Format: NetSSE, Path: "choices.0.delta.content", Reasoning: "choices.0.delta.reasoning_content"}, true},
		{"nothing carries the answer", []netState{end("http://h/api/title", `{"title":"Greeting"}`), end("http://h/api/chat", "something else entirely, of about the same length as the answer")}, NetSpec{}, false},
		{"a failed or unfinished response is not read", []netState{{URL: "http://h/api/chat", Seen: true, Ended: true, Failed: "net::ERR_FAILED", Body: []byte(shown)}, {URL: "http://h/api/chat2", Seen: true, Body: []byte(shown)}}, NetSpec{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shown := shown
			if strings.HasPrefix(tt.name, "the page's thinking block") {
				shown = "The user greets me; I will answer with a short greeting and two lines."
			}
			got, score, text := bestNet(tt.all, shown)
			if (score >= netMatch) != tt.match {
				t.Fatalf("likeness %.2f (%+v, %q), want a match: %v", score, got, text, tt.match)
			}
			if tt.match && !got.Equal(tt.want) {
				t.Errorf("spec %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLikeness(t *testing.T) {
	md := "# Plan\n\n- **one** thing\n- [two](https://example.com/a-long/link) things\n\n`code` here."
	tests := []struct {
		a, b   string
		lo, hi float64
	}{
		{"It ends here.", "It ends here.", 1, 1},
		{"It ends here.", "It ends here", 1, 1},                   // punctuation does not count
		{md, "Plan\none thing\ntwo things\ncode here.", 0.7, 0.8}, // a link's URL does
		{"# Plan\n\n- **one** thing", "Plan\none thing", 1, 1},
		{"The bot read 5 characters. It ends here.", "The bot read 5 characters. It ends her", 0.97, 0.99},
		{"abc", "", 0, 0},
		{"a completely different answer", "short", 0, 0},
	}
	for _, tt := range tests {
		if got := likeness(tt.a, tt.b); got < tt.lo || got > tt.hi {
			t.Errorf("likeness(%q, %q) = %.3f, want %.2f..%.2f", tt.a, tt.b, got, tt.lo, tt.hi)
		}
	}
}

func TestSuggest_PastIDs(t *testing.T) {
	tests := []struct{ path, want string }{
		{"/api/chat/3f2a9c0d11e4/messages/17", "/api/chat/*/messages/*"},
		{"/api/chat/c9e3ba0b2874f9dcd/completion/stream", "/api/chat/*/completion/stream"},
		{"/backend-api/conversation/0b7e3c1a-8d4f-4a2b-9c6d-1e2f3a4b5c6d", "/backend-api/conversation/*"},
		{"/api/v0/chat/completion", "/api/v0/chat/completion"}, // v0 is the endpoint's
		{"/v1/chat/completions", "/v1/chat/completions"},
		{"/api/conversation", "/api/conversation"},
		{"/c/V1StGXR8_Z5jdHi6B-myT/stream", "/c/*/stream"},
		{"/api/chat-completion/stream", "/api/chat-completion/stream"}, // words joined by a dash
	}
	for _, tt := range tests {
		if got := pastIDs(tt.path); got != tt.want {
			t.Errorf("pastIDs(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
