// Package apistand is a stand-in for an OpenAI-compatible chat-completions
// endpoint, for tests and the demo. It enforces a concurrency quota with
// 429, checks the bearer key, obeys the shared [[...]] directives in the
// user content (delay, hang, status, fail, empty, and the shapes of real
// gateways' answers in shapes.go), and records every request it received
// so tests can check what was sent.
package apistand

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Options shape a Server. The zero value is a usable stand-in.
type Options struct {
	// Addr to listen on; default 127.0.0.1:0.
	Addr string
	// Quota is the most requests answered at once; one more gets 429 with
	// Retry-After. 0 means no limit.
	Quota int
	// ModelQuota is a quota per requested model name, as vendors set one
	// per model: one request more of that model than its quota gets 429
	// with Retry-After, whatever the other models do.
	ModelQuota map[string]int
	// RetryAfter is the wait a 429 asks for, sent in whole seconds
	// (at least 1); default 1s. It is not scaled: it is the client's wait.
	RetryAfter time.Duration
	// RequireKey, if set, is the bearer key every request must carry; a
	// missing or wrong one gets 401.
	RequireKey string
	// Scale multiplies every [[duration]]; default 1.
	Scale float64
	// Models listed by GET /v1/models; default ["stand-in"]. Requests may
	// name any model.
	Models []string
	// Answer, if set, may give the answer text for a user message in place
	// of the directives' "Answer: ..." (ok false keeps that): a test's
	// Markdown answer, say. Directives still apply.
	Answer func(user string) (answer string, ok bool)
	// Log receives one line per request; default: discard.
	Log *slog.Logger
}

// Request is one chat-completions request as the stand-in received it.
type Request struct {
	At        time.Time
	Model     string
	HasSystem bool   // a system (or developer) message was present
	System    string // its text
	User      string // the last user message's text
	// Images are the last user message's image_url parts' URLs (data:
	// URLs from spoolgate), as received.
	Images        []string
	Messages      int    // how many messages in all
	Authorization string // the Authorization header as received
	Header        http.Header
	Stream        bool
	MaxTokens     int // max_tokens
	// MaxCompletionTokens is max_completion_tokens, the field OpenAI's
	// reasoning models read instead of max_tokens.
	MaxCompletionTokens int
	Temperature         *float64
	// ResponseFormat is the request's response_format as sent (nil when
	// it had none).
	ResponseFormat json.RawMessage
	Usage          Usage // the usage the stand-in reported for its answer
	Status         int   // the status the stand-in answered with
}

// Usage is the token counts the stand-in reported for one answer.
type Usage struct{ Prompt, Completion, Reasoning, Cached int }

// Server is a running stand-in. Close it when done.
type Server struct {
	opts Options
	ln   net.Listener
	srv  *http.Server
	url  string

	done      chan struct{} // closed by Close: hung answers end
	closeOnce sync.Once
	serveErr  chan error
	handlers  sync.WaitGroup

	mu       sync.Mutex
	inFlight int
	maxSeen  int
	// per requested model: answered now, and the most at once
	inFlightBy map[string]int
	maxSeenBy  map[string]int
	total      int
	rejected   int
	failSeen   map[string]int // [[fail=N]] counts, keyed by raw content
	reqs       []Request
	nextID     int
}

// Start listens and serves in the background.
func Start(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Scale <= 0 {
		opts.Scale = 1
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = time.Second
	}
	if len(opts.Models) == 0 {
		opts.Models = []string{"stand-in"}
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("apistand: listen: %w", err)
	}
	s := &Server{
		opts:     opts,
		ln:       ln,
		url:      "http://" + ln.Addr().String() + "/v1",
		done:     make(chan struct{}),
		serveErr: make(chan error, 1),
		failSeen: map[string]int{},

		inFlightBy: map[string]int{},
		maxSeenBy:  map[string]int{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.track(s.handleChat))
	mux.HandleFunc("GET /v1/models", s.track(s.handleModels))
	mux.HandleFunc("POST /v1/images/generations", s.track(s.handleImages))
	mux.HandleFunc("GET /v1/files/{key}/{name}", s.handleFile)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "invalid_request_error", "unknown path "+r.URL.Path)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { s.serveErr <- s.srv.Serve(ln) }()
	return s, nil
}

// URL is the base URL, ending in /v1, as an OpenAI client wants it.
func (s *Server) URL() string { return s.url }

// Close stops the server, ends hung answers, and waits for every handler.
// It is safe to call twice.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.done)
		err = s.srv.Close()
		if e := <-s.serveErr; e != nil && !errors.Is(e, http.ErrServerClosed) && err == nil {
			err = e
		}
		s.handlers.Wait()
	})
	return err
}

// track counts a handler so Close can wait for it.
func (s *Server) track(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.handlers.Add(1)
		defer s.handlers.Done()
		h(w, r)
	}
}

// Requests returns a copy of every chat request received, in order,
// including those answered 401 or 429.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// MaxConcurrent is the most chat requests that were being answered at once
// (429s are not counted: they were refused at the door).
func (s *Server) MaxConcurrent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxSeen
}

// MaxConcurrentModel is the most chat requests of model that were being
// answered at once (429s not counted).
func (s *Server) MaxConcurrentModel(model string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxSeenBy[model]
}

// InFlight is how many chat requests are being answered now.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// Total is how many chat requests arrived, whatever their answer.
func (s *Server) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Rejected is how many 429s the quota served.
func (s *Server) Rejected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rejected
}

// sleep waits d (already scaled), or until the client or the server goes
// away; it reports whether the whole wait passed.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

// scaled applies the time scale.
func (s *Server) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * s.opts.Scale)
}
