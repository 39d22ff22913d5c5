package chatstand

import (
	"net/http"
)

// What makes an account wait for a person: the stand-in signs one user
// out, or shows one user a challenge frame (Cloudflare's Turnstile, its
// address naming challenges.cloudflare.com but served here, on 127.0.0.1)
// over the chat page, by a test's call or by a directive in a message:
// `[[signout]]` signs its user out once the answer is given (the next
// page load shows the signed-out page), `[[challenge]]` makes the user's
// next page loads show the frame. Login ends both.

// SignInX and SignInY are the middle of the signed-out page's "Sign in"
// link (to the sign-in form), in the page's CSS pixels: a test signing in
// through the console's live view clicks there on the streamed image.
const SignInX, SignInY = 160, 160

// LoginFormsServed is how many sign-in forms the stand-in has served.
func (s *Server) LoginFormsServed() int { return int(s.loginForms.Load()) }

// ChallengeFramePath serves the challenge frame's stand-in.
const ChallengeFramePath = "/cdn-cgi/challenge-platform/h/b/turnstile/"

// challengeSrc is the frame's address: a path on the stand-in whose query
// names the vendor's host, as a site's frame address does.
const challengeSrc = ChallengeFramePath + "?host=challenges.cloudflare.com"

// SignOut ends every session of user: its next page load shows the
// signed-out page; other users stay signed in.
func (s *Server) SignOut(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signOutLocked(user)
}

func (s *Server) signOutLocked(user string) {
	for tok, u := range s.tokens {
		if u == user {
			delete(s.tokens, tok)
		}
	}
}

// Challenge makes user's page loads show the challenge frame over the chat
// page (on) or not; a login of user ends it too.
func (s *Server) Challenge(user string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.challengeLocked(user, on)
}

func (s *Server) challengeLocked(user string, on bool) {
	if s.challenges == nil {
		s.challenges = map[string]bool{}
	}
	if on {
		s.challenges[user] = true
	} else {
		delete(s.challenges, user)
	}
}

func (s *Server) challenged(user string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.challenges[user]
}

// afterAnswer applies a message's `[[signout]]` and `[[challenge]]` once
// its answer has been given.
func (s *Server) afterAnswer(user, content string) {
	d := parseDirectives(content)
	if !d.signout && !d.challenge {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.signout {
		s.signOutLocked(user)
	}
	if d.challenge {
		s.challengeLocked(user, true)
	}
}

// handleChallengeFrame is the frame's stand-in: a checkbox nobody ticks.
func handleChallengeFrame(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(`<!doctype html><title>Cloudflare</title><label><input type="checkbox"> Verify you are human</label>`))
}
