package chatstand

import (
	"embed"
	"net/http"
	"slices"
	"time"
)

// Editors are the rich-text editors the page can use as its input, each a
// bundle of the editor's npm release built by examples/editors/build.sh.
var Editors = []string{"prosemirror", "lexical", "quill"}

//go:embed editors/*.js
var editorJS embed.FS

// Inputs are every kind of message field the page can have.
var Inputs = append([]string{"textarea", "input", "contenteditable"}, Editors...)

func validInput(s string) bool { return slices.Contains(Inputs, s) }

// limitError is the page's usage-limit refusal.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// SetLimit makes every session limited for d: the page shows msg in its
// `.limit` element (on load, and in place of an answer when a message is
// sent), and no generation starts. A d of 0 lifts the limit.
func (s *Server) SetLimit(msg string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d <= 0 {
		s.limit, s.limitUntil = "", time.Time{}
		return
	}
	s.limit, s.limitUntil = msg, time.Now().Add(d)
}

// Limited is how many messages the usage limit refused.
func (s *Server) Limited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limited
}

func (s *Server) limitNow() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit != "" && time.Now().Before(s.limitUntil) {
		return s.limit
	}
	return ""
}

func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	u, ok := s.user(r)
	s.mu.Lock()
	instr := s.instructions
	s.mu.Unlock()
	script := ""
	if slices.Contains(Editors, s.opts.Input) {
		script = s.opts.Input
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = pageTmpl.Execute(w, map[string]any{
		"LoggedIn": ok, "User": u, "Instructions": instr, "Limit": s.limitNow(),
		"Input": s.opts.Input, "Script": script, "Shadow": s.opts.Shadow,
	})
}

// handleEditor serves an editor's bundle.
func (s *Server) handleEditor(w http.ResponseWriter, r *http.Request) {
	b, err := editorJS.ReadFile("editors/" + r.PathValue("name"))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "max-age=3600")
	_, _ = w.Write(b)
}
