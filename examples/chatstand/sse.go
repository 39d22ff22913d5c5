package chatstand

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// The Markdown answers' wire format, as the big chat sites have it: the
// page POSTs {"conversation","system","content","regenerate"} to
// /api/conversation and reads a text/event-stream of `data:` lines:
//
//	data: {"type":"meta","conversation":"c…","url":"/c/c…"}   the send is accepted
//	data: {"delta":"…"}                                       the next piece of the answer
//	data: {"text":"…"}                                        ...or the whole answer so far (Options.StreamFull, ?stream=full)
//	data: {"reasoning":"…"}                                   a reasoning page's thinking, before the answer (reasoning.go)
//	data: {"reasoningText":"…"}                               ...or the whole thinking so far (?stream=full)
//	data: {"type":"error","error":"Something went wrong…"}    the error turn
//	data: [DONE]                                              the answer ended; the response ends with it
//
// Every event that carries a multi-byte character is written in two
// pieces, cut inside that character, with a flush and a short gap between:
// a reader of the stream must join bytes before it decodes them.

// deltaSizes are the lengths in characters of successive deltas: uneven,
// so a link's URL or a table row arrives in several pieces.
var deltaSizes = []int{3, 8, 2, 12, 5, 1, 9, 4, 7}

// splitGap is the pause between the two pieces of an event that is cut
// inside a character: long enough that the browser reads them apart.
const splitGap = 2 * time.Millisecond

func splitDeltas(md string) []string {
	r := []rune(md)
	var out []string
	for i, k := 0, 0; i < len(r); k++ {
		n := min(deltaSizes[k%len(deltaSizes)], len(r)-i)
		out = append(out, string(r[i:i+n]))
		i += n
	}
	return out
}

// runTurn generates t's answer on the server, one delta every step,
// whether or not a page follows it, and frees the account's generation
// (end) when the answer has ended.
func (s *Server) runTurn(t *turn, d directives, step time.Duration, end func()) {
	defer s.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	wait := func(d time.Duration) bool {
		timer.Reset(d)
		select {
		case <-timer.C:
			return true
		case <-t.stop:
		case <-s.done:
		}
		return false
	}
	finish := func(state string) {
		end() // the account is free before the page can see the end
		s.mu.Lock()
		t.state, t.endedAt = state, time.Now()
		t.notify()
		s.mu.Unlock()
	}
	for i := range t.steps() {
		if d.pause > 0 && i == len(t.think)+len(t.deltas)/2 && !wait(d.pause) {
			finish(TurnStopped)
			return
		}
		if !wait(step) {
			finish(TurnStopped)
			return
		}
		s.mu.Lock()
		t.n = i + 1
		t.notify()
		s.mu.Unlock()
		if d.hang {
			wait(100 * 365 * 24 * time.Hour) // until stopped or closed
			finish(TurnStopped)
			return
		}
	}
	if t.steps() == 0 && !wait(step) {
		finish(TurnStopped)
		return
	}
	if d.errorTurn {
		finish(TurnError)
		return
	}
	finish(TurnDone)
}

// handleConversation is the page's send: a new message into a new or an
// existing conversation, or a regeneration of the last answer. The
// account's rules apply as on /api/chat (one generation at a time, the
// usage limit, `[[fail=N]]`); an admitted send streams its answer.
func (s *Server) handleConversation(w http.ResponseWriter, r *http.Request) {
	s.wg.Add(1)
	defer s.wg.Done()
	user, req, ok := s.signedInRequest(w, r)
	if !ok {
		return
	}
	isNew := req.Conversation == ""
	if isNew {
		req.Conversation = newID("c")
		req.Regenerate = false
	} else {
		s.mu.Lock()
		c, ok := s.convs[req.Conversation]
		if ok && c.user == user && req.Regenerate && len(c.turns) > 0 {
			last := c.turns[len(c.turns)-1]
			req.Content, req.System = last.content, last.system
		}
		s.mu.Unlock()
		if !ok || c.user != user {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "Conversation not found."})
			return
		}
	}
	end, ok := s.beginOrRefuse(w, user, req)
	if !ok {
		return
	}
	d := parseDirectives(req.Content)
	think, deltas := s.turnDeltas(r, req)
	t := &turn{content: req.Content, system: req.System, think: think, deltas: deltas,
		state: TurnStreaming, changed: make(chan struct{}), stop: make(chan struct{})}
	s.mu.Lock()
	c, ok := s.convs[req.Conversation]
	switch {
	case !ok && !isNew: // forgotten while the send was admitted
		s.mu.Unlock()
		end()
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Conversation not found."})
		return
	case !ok:
		c = &conv{id: req.Conversation, user: user, created: time.Now()}
		s.convs[c.id] = c
	}
	if req.Regenerate && len(c.turns) > 0 {
		c.turns[len(c.turns)-1].stopNow()
		c.turns[len(c.turns)-1] = t
	} else {
		c.turns = append(c.turns, t)
	}
	if d.nostart {
		t.state = TurnPending
	}
	s.mu.Unlock()
	if d.nostart {
		// Taken (the conversation and its message exist, the history shows
		// them) and never answered: no headers, nothing, until the client
		// leaves.
		defer end()
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	step := s.scaled(DefaultDuration)
	if d.duration > 0 {
		step = s.scaled(d.duration)
	}
	step /= time.Duration(max(t.steps(), 1))
	s.wg.Add(1)
	go s.runTurn(t, d, step, end)
	s.follow(w, r, c.id, t)
}

// handleRedirect is the send behind a redirect (?redirect=1): a 307 to
// /api/conversation keeps the method and the body, so the browser sends
// the same request again and the stream comes from the second URL.
func (s *Server) handleRedirect(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	q.Del("redirect")
	u := "/api/conversation"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	http.Redirect(w, r, u, http.StatusTemporaryRedirect)
}

// conversationOf finds user's conversation id and its last turn.
func (s *Server) conversationOf(user, id string) (*conv, *turn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.convs[id]
	if !ok || c.user != user {
		return nil, nil, false
	}
	var t *turn
	if len(c.turns) > 0 {
		t = c.turns[len(c.turns)-1]
	}
	return c, t, true
}

// handleAttach streams the last answer of a conversation from its start:
// what is generated so far in one event, then the rest as it comes. A
// page that loads /c/ID mid-answer follows the answer with it.
func (s *Server) handleAttach(w http.ResponseWriter, r *http.Request) {
	s.wg.Add(1)
	defer s.wg.Done()
	user, ok := s.signedIn(w, r)
	if !ok {
		return
	}
	c, t, ok := s.conversationOf(user, r.PathValue("id"))
	if !ok || t == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Conversation not found."})
		return
	}
	s.follow(w, r, c.id, t)
}

// handleStop is the page's Stop button: the answer ends where it is.
func (s *Server) handleStop(w http.ResponseWriter, r *http.Request) {
	user, ok := s.signedIn(w, r)
	if !ok {
		return
	}
	_, t, ok := s.conversationOf(user, r.PathValue("id"))
	if !ok || t == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Conversation not found."})
		return
	}
	s.mu.Lock()
	t.stopNow()
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// handleForget deletes a conversation (DELETE /api/conversation/ID), the
// HTTP form of Forget.
func (s *Server) handleForget(w http.ResponseWriter, r *http.Request) {
	user, ok := s.signedIn(w, r)
	if !ok {
		return
	}
	if _, _, ok := s.conversationOf(user, r.PathValue("id")); !ok || !s.Forget(r.PathValue("id")) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Conversation not found."})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleConversationJSON shows a conversation as JSON (GET
// /api/conversation/ID), for people and tools looking at the stand-in.
func (s *Server) handleConversationJSON(w http.ResponseWriter, r *http.Request) {
	user, ok := s.signedIn(w, r)
	if !ok {
		return
	}
	c, _, ok := s.conversationOf(user, r.PathValue("id"))
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Conversation not found."})
		return
	}
	s.mu.Lock()
	snap := c.snapshot()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, snap)
}

// sseWriter writes a response's events: SSE `data:` lines, or with
// ndjson one JSON object a line (the end: {"type":"done"}).
type sseWriter struct {
	w      http.ResponseWriter
	fl     http.Flusher
	ctx    context.Context
	ndjson bool
}

func (e *sseWriter) event(v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	if e.ndjson {
		e.raw(b.Bytes())
		return
	}
	e.raw(append(append([]byte("data: "), bytes.TrimSuffix(b.Bytes(), []byte("\n"))...), "\n\n"...))
}

func (e *sseWriter) end() {
	if e.ndjson {
		e.raw([]byte(`{"type":"done"}` + "\n"))
		return
	}
	e.raw([]byte("data: [DONE]\n\n"))
}

// raw writes p, cut after the first byte of its first multi-byte
// character when it has one.
func (e *sseWriter) raw(p []byte) {
	if i := bytes.IndexFunc(p, func(r rune) bool { return r >= 0x80 }); i >= 0 {
		_, _ = e.w.Write(p[:i+1])
		e.flush()
		t := time.NewTimer(splitGap)
		select {
		case <-t.C:
		case <-e.ctx.Done():
		}
		t.Stop()
		p = p[i+1:]
	}
	_, _ = e.w.Write(p)
	e.flush()
}

func (e *sseWriter) flush() {
	if e.fl != nil {
		e.fl.Flush()
	}
}

// follow streams t to the client from its start until the answer ends,
// the client leaves or the server closes.
func (s *Server) follow(w http.ResponseWriter, r *http.Request, id string, t *turn) {
	if s.socketOf(r) {
		s.followSocket(w, r, id, t)
		return
	}
	if wire := s.wireOf(r); wire != "" {
		s.followWire(w, r, id, t, wire)
		return
	}
	full := s.opts.StreamFull
	switch r.URL.Query().Get("stream") {
	case "full":
		full = true
	case "delta":
		full = false
	}
	ndjson := s.opts.NDJSON || r.URL.Query().Get("wire") == "ndjson"
	if ndjson {
		w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Conversation", id)
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	e := &sseWriter{w: w, fl: fl, ctx: r.Context(), ndjson: ndjson}
	e.event(map[string]string{"type": "meta", "conversation": id, "url": "/c/" + id})
	sent := 0
	for {
		s.mu.Lock()
		n, state, changed := t.n, t.state, t.changed
		s.mu.Unlock()
		if n > sent {
			thinkEv := func(upto, from int) map[string]string {
				if full {
					return map[string]string{"reasoningText": t.thinking(upto)}
				}
				return map[string]string{"reasoning": t.thinking(upto)[len(t.thinking(from)):]}
			}
			textEv := func(upto, from int) map[string]string {
				if full {
					return map[string]string{"text": t.text(upto)}
				}
				return map[string]string{"delta": t.text(upto)[len(t.text(from)):]}
			}
			if sent == 0 && n > 1 {
				// Catching up (the page's stream came after the turn
				// began, a busy machine): what there is, the thinking so
				// far and the answer so far, in one event each.
				if k := min(n, len(t.think)); k > 0 {
					e.event(thinkEv(k, 0))
				}
				if n > len(t.think) {
					e.event(textEv(n, len(t.think)))
				}
				sent = n
			}
			for i := sent; i < n; i++ {
				if i < len(t.think) {
					e.event(thinkEv(i+1, sent)) // the thinking, in events of its own
				} else {
					e.event(textEv(i+1, sent))
				}
				sent = i + 1
			}
		}
		if state != TurnStreaming && state != TurnPending {
			if state == TurnError {
				e.event(map[string]string{"type": "error", "error": ErrTurn})
			}
			e.end()
			s.mu.Lock()
			if t.doneSent.IsZero() {
				t.doneSent = time.Now()
			}
			s.mu.Unlock()
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		}
	}
}
