package chatstand

// The stand-in's HTTP handlers: login, logout, and the generations
// that begin admits one at a time per user.

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// handleLogin: GET /login?user=NAME (or a form POST) sets the session cookie
// and redirects to /; GET /login without a user shows a small form, whose
// name left empty signs in as demo.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	user := strings.TrimSpace(r.FormValue("user"))
	if user == "" && r.Method == http.MethodPost {
		user = "demo" // the form's field left empty: its placeholder
	}
	if user == "" {
		// The name field is empty (its placeholder says demo) and has the
		// focus, so a name typed (also through the console's live view)
		// is the name, and Enter signs in.
		s.loginForms.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><form method="post" action="/login"><input name="user" placeholder="demo" autofocus><button type="submit">Sign in</button></form>`+
			`<script>document.querySelector('input').focus();</script>`)
		return
	}
	s.setSession(w, user)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// setSession signs user in on w's browser with a persistent cookie (not a
// session cookie), so the login survives a browser restart on the same
// profile, as a vendor's "remember me" does.
func (s *Server) setSession(w http.ResponseWriter, user string) {
	http.SetCookie(w, &http.Cookie{Name: s.opts.CookieName, Value: s.Login(user), Path: "/", MaxAge: 30 * 24 * 3600, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(s.opts.CookieName); err == nil {
		s.mu.Lock()
		delete(s.tokens, c.Value)
		s.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: s.opts.CookieName, Value: "", Path: "/", MaxAge: -1})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

type chatRequest struct {
	Session  string `json:"session"` // /api/generate only: the user
	System   string `json:"system"`
	Content  string `json:"content"`
	Continue string `json:"continue"` // the page's "Continue generating": a token of an earlier answer
	// /api/conversation only: the conversation ("" for a new one), and
	// whether this regenerates its last answer.
	Conversation string `json:"conversation"`
	Regenerate   bool   `json:"regenerate"`
	// Modes is a reasoning page's switches and model at the send.
	Modes *Modes `json:"modes"`
	// Files are the ids of the uploads (uploads.go) sent with the message.
	Files []string `json:"files"`
}

// errCollision and errFail are the two refusals of begin.
var (
	errCollision = errors.New(ErrOneAtATime)
	errFail      = errors.New(ErrFailed)
)

// begin admits one generation for user or refuses it; on success the
// caller must call the returned end exactly once.
func (s *Server) begin(user string, req chatRequest) (end func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	msg := Message{User: user, System: req.System, Content: req.Content, Regenerate: req.Regenerate, Files: s.filesOf(req.Files), At: time.Now()}
	if req.Modes != nil {
		msg.Modes = *req.Modes
	}
	s.active[user]++
	if s.active[user] > s.maxActive {
		s.maxActive = s.active[user]
	}
	s.perAccount.admitted(user, s.active)
	if s.active[user] > 1 {
		s.active[user]--
		s.collisions++
		msg.Refused = "collision"
		s.received = append(s.received, msg)
		return nil, errCollision
	}
	limit := ""
	if s.limit != "" && time.Now().Before(s.limitUntil) {
		limit = s.limit
	} else if parseDirectives(req.Content).limit {
		limit = LimitMessage
	}
	if limit != "" {
		s.active[user]--
		s.limited++
		msg.Refused = "limited"
		s.received = append(s.received, msg)
		return nil, &limitError{limit}
	}
	if req.Continue != "" {
		// "Continue generating" holds the session like any generation but
		// is not a new message.
		return s.ender(user), nil
	}
	if d := parseDirectives(req.Content); d.fail > 0 && s.failuresSeen[req.Content] < d.fail {
		s.failuresSeen[req.Content]++
		s.active[user]--
		msg.Refused = "fail"
		s.received = append(s.received, msg)
		return nil, errFail
	}
	s.generations++
	s.perAccount.generated(user)
	msg.Conversation = req.Conversation
	s.received = append(s.received, msg)
	done := s.ender(user)
	return func() { done(); s.afterAnswer(user, req.Content) }, nil
}

// ender returns the end of one admitted request of user.
func (s *Server) ender(user string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.active[user]--
			s.mu.Unlock()
		})
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func refusalCode(err error) int {
	if errors.Is(err, errCollision) {
		return http.StatusConflict
	}
	var le *limitError
	if errors.As(err, &le) {
		return http.StatusTooManyRequests
	}
	return http.StatusServiceUnavailable
}

// beginOrRefuse begins a generation for user, or writes the refusal as
// JSON {"error"} ({"limited"} too for the usage limit) and reports false.
func (s *Server) beginOrRefuse(w http.ResponseWriter, user string, req chatRequest) (end func(), ok bool) {
	end, err := s.begin(user, req)
	if err != nil {
		out := map[string]string{"error": err.Error()}
		var le *limitError
		if errors.As(err, &le) {
			out["limited"] = le.msg
		}
		writeJSON(w, refusalCode(err), out)
		return nil, false
	}
	return end, true
}

// handleChat serves the page's own request: the answer streams as plain
// text, word by word, over the directive's duration. A refusal is JSON
// {"error"} (and {"limited"} for the usage limit, 429).
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	s.wg.Add(1)
	defer s.wg.Done()
	user, req, ok := s.signedInRequest(w, r)
	if !ok {
		return
	}
	p, ok := s.planFor(req)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Nothing to continue."})
		return
	}
	end, ok := s.beginOrRefuse(w, user, req)
	if !ok {
		return
	}
	defer end()
	if p.nostart {
		// A backend that took the message and never answers: no headers,
		// nothing, until the client leaves.
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	if len(p.rest) > 0 {
		w.Header().Set("X-Continue", s.keepRest(p.rest))
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	s.play(r.Context(), p, func(chunk string) {
		_, _ = w.Write([]byte(chunk))
		if fl != nil {
			fl.Flush()
		}
	})
}

// handleGenerate is the same generation as a plain request/response, for
// the benchmark: {"session","system","content"} in, {"answer"} out, 409
// with {"error"} on a collision.
func (s *Server) handleGenerate(w http.ResponseWriter, r *http.Request) {
	s.wg.Add(1)
	defer s.wg.Done()
	var req chatRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad request: " + err.Error()})
		return
	}
	if req.Session == "" {
		req.Session = "default"
	}
	end, err := s.begin(req.Session, req)
	if err != nil {
		if errors.Is(err, errCollision) && s.opts.LateCollisions {
			if !s.stream(r.Context(), req.Content, func(string) {}) {
				return
			}
		}
		writeJSON(w, refusalCode(err), map[string]string{"error": err.Error()})
		return
	}
	defer end()
	var b strings.Builder
	if !s.stream(r.Context(), req.Content, func(c string) { b.WriteString(c) }) {
		return // client gone or server closing
	}
	writeJSON(w, http.StatusOK, map[string]string{"answer": b.String()})
}
