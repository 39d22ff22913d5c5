package apistand

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// chatRequest is the part of a chat-completions body the stand-in reads.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Stream   bool          `json:"stream"`
	// StreamOptions.IncludeUsage asks for a last chunk with the token
	// counts (the stand-in counts words: see usageOf).
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens      int             `json:"max_tokens"`
	MaxCompl       int             `json:"max_completion_tokens"`
	Temperature    *float64        `json:"temperature"`
	ResponseFormat json.RawMessage `json:"response_format"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text returns a message's content, whether a string or a list of parts.
func (m chatMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// images returns the URLs of a message's image_url parts, in order.
func (m chatMessage) images() []string {
	var parts []struct {
		Type     string `json:"type"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return nil
	}
	var urls []string
	for _, p := range parts {
		if p.Type == "image_url" {
			urls = append(urls, p.ImageURL.URL)
		}
	}
	return urls
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "cannot read body")
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "body is not JSON: "+err.Error())
		return
	}
	rec := Request{
		At:                  time.Now(),
		Model:               req.Model,
		Messages:            len(req.Messages),
		Authorization:       r.Header.Get("Authorization"),
		Header:              r.Header.Clone(),
		Stream:              req.Stream,
		MaxTokens:           req.MaxTokens,
		MaxCompletionTokens: req.MaxCompl,
		Temperature:         req.Temperature,
		ResponseFormat:      req.ResponseFormat,
	}
	for _, m := range req.Messages {
		switch m.Role {
		case "system", "developer":
			rec.HasSystem = true
			rec.System = m.text()
		case "user":
			rec.User = m.text()
			rec.Images = m.images()
		}
	}

	// The door: key, then quota. Both are decided before any work, under
	// one lock, so the in-flight count is exact.
	status := 0
	s.mu.Lock()
	s.total++
	s.nextID++
	id := s.nextID
	switch {
	case s.opts.RequireKey != "" && rec.Authorization != "Bearer "+s.opts.RequireKey:
		status = http.StatusUnauthorized
	case s.opts.Quota > 0 && s.inFlight >= s.opts.Quota:
		status = http.StatusTooManyRequests
		s.rejected++
	case s.opts.ModelQuota[req.Model] > 0 && s.inFlightBy[req.Model] >= s.opts.ModelQuota[req.Model]:
		status = http.StatusTooManyRequests
		s.rejected++
	default:
		s.inFlight++
		s.maxSeen = max(s.maxSeen, s.inFlight)
		s.inFlightBy[req.Model]++
		s.maxSeenBy[req.Model] = max(s.maxSeenBy[req.Model], s.inFlightBy[req.Model])
	}
	idx := len(s.reqs)
	s.reqs = append(s.reqs, rec)
	s.mu.Unlock()

	setStatus := func(code int) {
		s.mu.Lock()
		s.reqs[idx].Status = code
		s.mu.Unlock()
		s.opts.Log.Info("chat", "id", id, "model", rec.Model, "status", code, "system", rec.HasSystem, "stream", rec.Stream)
	}
	switch status {
	case http.StatusUnauthorized:
		setStatus(status)
		writeError(w, status, "invalid_request_error", "Incorrect API key provided.")
		return
	case http.StatusTooManyRequests:
		setStatus(status)
		secs := int(math.Ceil(s.opts.RetryAfter.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		writeError(w, status, "rate_limit_exceeded", "Rate limit reached: too many requests at once.")
		return
	}
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.inFlightBy[req.Model]--
		s.mu.Unlock()
	}()

	d, answer := ParseDirectives(rec.User)
	if s.opts.Answer != nil {
		if a, ok := s.opts.Answer(rec.User); ok {
			answer = a
		}
	}
	if d.Fail > 0 {
		s.mu.Lock()
		s.failSeen[rec.User]++
		n := s.failSeen[rec.User]
		s.mu.Unlock()
		if n <= d.Fail {
			d.Status = http.StatusInternalServerError
		}
	}
	if d.Empty {
		answer = ""
	}
	total := s.scaled(d.Duration)

	if d.Status != 0 && d.Status != http.StatusOK {
		// A failure still takes its time: a slow 500 is a real thing.
		if !s.sleep(r.Context(), total) {
			setStatus(499)
			return
		}
		setStatus(d.Status)
		writeShaped(w, d, d.Status, errorType(d.Status), d.message(fmt.Sprintf("stand-in: status %d requested", d.Status), rec.Authorization))
		return
	}
	switch {
	case d.Junk:
		setStatus(http.StatusOK)
		writeJunk(w, d.message("We are upgrading our servers.", rec.Authorization))
		return
	case d.StreamError != "" && req.Stream:
		setStatus(http.StatusOK)
		def := "stand-in: error " + d.StreamError
		if strings.HasPrefix(d.StreamError, "rate_limit") {
			def = "Rate limit reached for requests. Please try again in 2s."
		}
		streamWithError(w, id, rec.Model, d.StreamError, d.message(def, rec.Authorization))
		return
	}
	if !req.Stream || d.JSON {
		if d.Hang {
			s.hang(r)
			setStatus(499)
			return
		}
		if !s.sleep(r.Context(), total) {
			setStatus(499)
			return
		}
		setStatus(http.StatusOK)
		c := completion(id, rec.Model, answer)
		c["usage"] = s.usageOf(idx, rec, d, answer)
		writeJSON(w, http.StatusOK, c)
		return
	}
	setStatus(http.StatusOK)
	var u map[string]any
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		u = s.usageOf(idx, rec, d, answer)
	}
	s.stream(w, r, id, rec.Model, answer, total, d.Hang, u)
}

// usageOf is the stand-in's token count of a request and its answer:
// one token per word, of the system and user messages and of the answer,
// with the reasoning and cached tokens its directives ask for; it is
// recorded with the request, for tests to compare.
func (s *Server) usageOf(idx int, rec Request, d Directives, answer string) map[string]any {
	u := Usage{Prompt: len(strings.Fields(rec.System)) + len(strings.Fields(rec.User)), Reasoning: d.Reasoning}
	u.Completion = len(strings.Fields(answer)) + u.Reasoning
	u.Cached = min(d.Cached, u.Prompt)
	s.mu.Lock()
	s.reqs[idx].Usage = u
	s.mu.Unlock()
	m := map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Prompt + u.Completion}
	if u.Reasoning > 0 || u.Cached > 0 {
		m["completion_tokens_details"] = map[string]any{"reasoning_tokens": u.Reasoning}
		m["prompt_tokens_details"] = map[string]any{"cached_tokens": u.Cached}
	}
	return m
}

// hang waits until the client or the server goes away.
func (s *Server) hang(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
}

// stream sends the answer as server-sent events, one word per chunk,
// spread evenly over total. With hang it sends the role chunk, then nothing.
// usage, when the request asked for it, follows the finish as a chunk of
// its own with no choices, as OpenAI sends it.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, id int, model, answer string, total time.Duration, hang bool, usage map[string]any) {
	send := startEvents(w)
	send(chunk(id, model, map[string]any{"role": "assistant", "content": ""}, nil))
	if hang {
		s.hang(r)
		return
	}
	words := splitKeepSpace(answer)
	var gap time.Duration
	if len(words) > 0 {
		gap = total / time.Duration(len(words))
	} else if !s.sleep(r.Context(), total) {
		return
	}
	for _, wd := range words {
		if !s.sleep(r.Context(), gap) {
			return
		}
		send(chunk(id, model, map[string]any{"content": wd}, nil))
	}
	stop := "stop"
	send(chunk(id, model, map[string]any{}, &stop))
	if usage != nil {
		c := chunk(id, model, nil, nil)
		c["choices"], c["usage"] = []any{}, usage
		send(c)
	}
	send(nil)
}

// startEvents answers 200 as an event stream and returns the function that
// sends one event, flushed; send(nil) sends the closing [DONE].
func startEvents(w http.ResponseWriter) (send func(v any)) {
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return func(v any) {
		b := []byte("[DONE]")
		if v != nil {
			b, _ = json.Marshal(v)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
}

// splitKeepSpace cuts s into words, each but the first with its leading
// space, so the pieces concatenate back to s.
func splitKeepSpace(s string) []string {
	var out []string
	for i, f := range strings.Split(s, " ") {
		if i > 0 {
			f = " " + f
		}
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

func chunk(id int, model string, delta map[string]any, finish *string) map[string]any {
	return map[string]any{
		"id":      fmt.Sprintf("chatcmpl-stand-%d", id),
		"object":  "chat.completion.chunk",
		"created": time.Now().Unix(),
		"model":   model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
	}
}

func completion(id int, model, answer string) map[string]any {
	return map[string]any{
		"id":      fmt.Sprintf("chatcmpl-stand-%d", id),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": answer},
			"finish_reason": "stop",
		}},
		"usage": map[string]any{"prompt_tokens": 0, "completion_tokens": len(strings.Fields(answer)), "total_tokens": len(strings.Fields(answer))},
	}
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	data := make([]any, 0, len(s.opts.Models))
	for _, m := range s.opts.Models {
		data = append(data, map[string]any{"id": m, "object": "model", "created": 0, "owned_by": "apistand"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// errorType names an OpenAI-style error type for a status.
func errorType(code int) string {
	switch {
	case code == http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	case code == http.StatusUnauthorized:
		return "authentication_error"
	case code >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

func writeError(w http.ResponseWriter, code int, typ, msg string) {
	writeJSON(w, code, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}
