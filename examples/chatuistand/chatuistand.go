// Package chatuistand serves real chat front ends from npm, each bundled
// by examples/chatuis/build.sh, on 127.0.0.1 with a streaming bot behind
// them: the pages `spoolgate check SITE --suggest` is verified on. The
// project writes none of these pages' markup: each UI renders its own DOM
// (class names, roles, shadow roots) the way it does for its users; the
// entry files in examples/chatuis/src only mount it and connect its
// streaming hook to /api/chat.
//
// The bot answers every message with AnswerFor(text), streamed a few
// words at a time, and records exactly what the page sent.
package chatuistand

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// UIs are the bundled chat front ends, by the name of their bundle.
var UIs = []string{"nlux", "deepchat", "chatscope", "chatbotify", "assistantui", "chatui"}

// Packages names the npm package behind each UI, for reports.
var Packages = map[string]string{
	"nlux":        "@nlux/core",
	"deepchat":    "deep-chat",
	"chatscope":   "@chatscope/chat-ui-kit-react",
	"chatbotify":  "react-chatbotify",
	"assistantui": "@assistant-ui/react",
	"chatui":      "@chatui/core",
}

//go:embed bundles/*
var bundles embed.FS

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.}} — chat</title>
<link rel="stylesheet" href="/bundle/{{.}}.css">
<style>body { margin: 0; font-family: sans-serif; } #root { max-width: 900px; margin: 0 auto; }</style>
</head><body><div id="root"></div><script src="/bundle/{{.}}.js"></script></body></html>
`))

// Options shape a stand-in.
type Options struct {
	Addr string // default 127.0.0.1:0
	UI   string // one of UIs
	// Step is the time between two pieces of the answer (default 60 ms:
	// an answer of AnswerFor's length streams for about 1.5 s).
	Step time.Duration
}

// Exchange is one message the bot received and what it answered.
type Exchange struct {
	Text     string
	Answer   string
	Thinking string // on a reasoning page (?sse=openai): what it streamed before the answer
}

// Server is a running stand-in.
type Server struct {
	opts Options
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	received []Exchange
}

// Start listens and serves until Close.
func Start(opts Options) (*Server, error) {
	if !slices.Contains(UIs, opts.UI) && !slices.Contains(ReasoningUIs, opts.UI) {
		return nil, fmt.Errorf("chatuistand: UI %q is not one of %v or %v", opts.UI, UIs, ReasoningUIs)
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Step <= 0 {
		opts.Step = 60 * time.Millisecond
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("chatuistand: listen: %w", err)
	}
	s := &Server{opts: opts, ln: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.handlePage)
	mux.HandleFunc("GET /bundle/{name}", s.handleBundle)
	mux.HandleFunc("POST /api/chat", s.handleChat)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the page's address.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/" }

// Close stops serving and waits for every streaming answer to end.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	err := s.srv.Close()
	s.wg.Wait()
	return err
}

// Received is every message the bot took, in order.
func (s *Server) Received() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.received)
}

// Paragraphs is a message's prefix that asks for a plain-text answer in
// paragraphs and lines (CJK and emoji in it): a UI that shows plain text
// keeps its breaks only by its white-space style.
const Paragraphs = "[[paragraphs]]"

// AnswerFor is the bot's answer to text: one plain paragraph (no Markdown
// that a UI would render differently) naming the text's length and its
// first word, long enough to stream for a while; for a text that starts
// with Paragraphs, two paragraphs, the second of two lines.
func AnswerFor(text string) string {
	if strings.HasPrefix(text, Paragraphs) {
		return fmt.Sprintf("The bot read %d characters: 发布说明 🚀 and the answer is 42.\n\n"+
			"Second paragraph of the reply, 第二段。\nThird line, last.", utf8.RuneCountInString(text))
	}
	first := "nothing"
	if f := strings.Fields(text); len(f) > 0 {
		first = strings.Trim(f[0], "*_`#[]()<>!~|\\")
		if first == "" {
			first = "symbols"
		}
		if utf8.RuneCountInString(first) > 20 {
			first = string([]rune(first)[:20])
		}
	}
	return fmt.Sprintf("The bot read %d characters, the first word being %s. This reply streams a few words at a time, "+
		"so a reader has to wait until the last sentence has arrived before it takes the answer. It ends here.",
		utf8.RuneCountInString(text), first)
}

func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = pageTmpl.Execute(w, s.opts.UI)
}

func (s *Server) handleBundle(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, err := bundles.ReadFile("bundles/" + name)
	switch {
	case err != nil && strings.HasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css")
		return // a UI with no stylesheet of its own
	case err != nil:
		http.NotFound(w, r)
		return
	case strings.HasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css")
	default:
		w.Header().Set("Content-Type", "text/javascript")
	}
	_, _ = w.Write(b)
}

// chatRequest is either the entry files' {text} or deep-chat's own body
// ({messages: [{role, text}]}).
type chatRequest struct {
	Text     string `json:"text"`
	Messages []struct {
		Role string `json:"role"`
		Text string `json:"text"`
	} `json:"messages"`
}

func (r chatRequest) userText() (string, error) {
	if r.Text != "" {
		return r.Text, nil
	}
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text, nil
		}
	}
	return "", errors.New("no user text in the request")
}

// handleChat streams the answer: plain text in chunks, with ?sse=1
// Server-Sent Events of {"text": piece}, deep-chat's stream format, or
// with ?sse=openai a reasoning model's OpenAI-style chunks (reasoning.go).
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	var req chatRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	text := ""
	if err == nil {
		text, err = req.userText()
	}
	if err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	ex := Exchange{Text: text, Answer: AnswerFor(text)}
	sse := r.URL.Query().Get("sse")
	evs := pieces(ex.Answer, 3)
	if sse == "openai" {
		ex.Answer, ex.Thinking, evs = MarkdownAnswerFor(text), ThinkingFor(text), reasoningEvents(text)
	}
	s.mu.Lock()
	s.received = append(s.received, ex)
	s.mu.Unlock()
	if sse != "" {
		w.Header().Set("Content-Type", "text/event-stream")
	} else {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.Header().Set("Cache-Control", "no-store")
	fl, _ := w.(http.Flusher)
	t := time.NewTicker(s.opts.Step)
	defer t.Stop()
	for _, piece := range evs {
		select {
		case <-s.done:
			return
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		switch sse {
		case "openai":
			err = writeEvent(w, piece)
		case "1":
			b, _ := json.Marshal(map[string]string{"text": piece})
			_, err = fmt.Fprintf(w, "data: %s\n\n", b)
		default:
			_, err = io.WriteString(w, piece)
		}
		if err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

// pieces cuts s into runs of n words, each with the space before its
// next word, so that the pieces joined are s.
func pieces(s string, n int) []string {
	var out []string
	words := strings.SplitAfter(s, " ")
	for i := 0; i < len(words); i += n {
		out = append(out, strings.Join(words[i:min(i+n, len(words))], ""))
	}
	return out
}
