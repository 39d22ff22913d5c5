package chatstand

import (
	"encoding/json"
	"net/http"
	"sort"
)

// Options.Secrets plants what a real signed-in chat page holds besides
// the answer, for the secrets sweep (issue 49): an inline boot script with
// an access token and the account's e-mail, a CSRF <meta> and hidden
// input, a data-* attribute with the e-mail, a localStorage value, a
// same-origin /api/auth/session that answers the bearer token, a
// conversations export, and a GET that signs the account out everywhere
// (a side effect) and records being hit. Every request to those three
// addresses is recorded with its Sec-Fetch-Dest, so a test tells the
// page's own <img> loads (image) from a script's fetch() (empty).
const (
	SecretBootToken = "boot-tok-7Qx2mZr9Lw4Kp8Vt"
	SecretEmail     = "alice.secret@mediateam.example"
	SecretCSRF      = "csrf-3Hn8Yq1Bv6Rc0Xe5"
	SecretLocal     = "local-refresh-9Tg4Wd2Ks7Pm1Jz6"
	SecretBearer    = "bearer-eyJhbGciOiJIUzI1NiJ9.c2VjcmV0"
	SecretExport    = "conversation-export-Kz81-private-title"
	// The planted addresses.
	SessionPath = "/api/auth/session"
	ExportPath  = "/export/conversations.json"
	SignOutPath = "/logout/everywhere.csv"
)

// SecretHit is one request to a planted address.
type SecretHit struct {
	Path string
	Dest string // Sec-Fetch-Dest: image for the page's <img>, empty for fetch()
}

// secretsHead is what the page's <head> carries with Options.Secrets.
const secretsHead = `<meta name="csrf-token" content="` + SecretCSRF + `">
<script id="__boot">window.__BOOT__ = {"accessToken": "` + SecretBootToken + `", "user": {"email": "` + SecretEmail + `"}};
try { localStorage.setItem('refresh_token', '` + SecretLocal + `'); } catch (e) {}</script>
<script type="application/json" id="__state">{"session": {"accessToken": "` + SecretBootToken + `"}}</script>`

// secretsBody is what the page's <body> carries with Options.Secrets.
const secretsBody = `<form class="account" hidden><input type="hidden" name="csrf" value="` + SecretCSRF + `"></form>
<div class="profile" data-user-email="` + SecretEmail + `" data-token="` + SecretBootToken + `" aria-label="Account"></div>`

func (s *Server) recordSecretHit(r *http.Request) {
	s.mu.Lock()
	s.secretHits = append(s.secretHits, SecretHit{Path: r.URL.Path, Dest: r.Header.Get("Sec-Fetch-Dest")})
	s.mu.Unlock()
}

// handleSession answers the account's session, bearer token included, as
// the big chat sites' /api/auth/session does.
func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	s.recordSecretHit(r)
	u, ok := s.user(r)
	if !ok {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"accessToken": SecretBearer, "user": map[string]string{"name": u, "email": SecretEmail}})
}

// handleExport answers every conversation of the account.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	s.recordSecretHit(r)
	u, ok := s.user(r)
	if !ok {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	var titles []string
	for _, c := range s.history(u) {
		titles = append(titles, c.title())
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"owner": SecretEmail, "private": SecretExport, "conversations": titles})
}

// handleSignOut signs the account out everywhere: a GET with a side
// effect, as some sites' sign-out links are.
func (s *Server) handleSignOut(w http.ResponseWriter, r *http.Request) {
	s.recordSecretHit(r)
	if u, ok := s.user(r); ok {
		s.mu.Lock()
		for tok, who := range s.tokens {
			if who == u {
				delete(s.tokens, tok)
			}
		}
		s.mu.Unlock()
	}
	w.Header().Set("Content-Type", "text/csv")
	_, _ = w.Write([]byte("signed,out\nall,sessions\n"))
}

// SecretHits are the requests to the planted addresses, in order.
func (s *Server) SecretHits() []SecretHit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SecretHit(nil), s.secretHits...)
}

// SessionValues are the values of every session cookie the stand-in
// issued and still honours: secrets a sweep looks for.
func (s *Server) SessionValues() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.tokens))
	for tok := range s.tokens {
		out = append(out, tok)
	}
	sort.Strings(out)
	return out
}

// plantedMarkdown is what a `[[plant]]` answer adds: the planted
// addresses as an image and links, words the task's own text never said,
// as a model that repeats a page it read (or a colleague's planted text)
// would write them.
func plantedMarkdown(content string) string {
	if !parseDirectives(content).plant {
		return ""
	}
	return "\n\nFrom the page I read: ![Quarterly chart](" + SessionPath + ") and [Export](" + ExportPath + ") and [Sign out](" + SignOutPath + ")"
}
