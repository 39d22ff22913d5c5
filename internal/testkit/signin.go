package testkit

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// The sign-in stand-in (issue 42's live view): a site whose page, signed
// out, shows its signed-out link and a "Sign in" button at a known place;
// the button reveals a code field, and the right code typed there (Enter)
// signs the browser in with a persistent cookie. Signed in, the page shows
// the chat's message field.
const (
	// SignInCode is the code the stand-in takes.
	SignInCode = "424242"
	// SignInX and SignInY are the middle of the "Sign in" button, in the
	// page's CSS pixels.
	SignInX, SignInY = 160, 160
)

// SignInStandin is a started sign-in stand-in on 127.0.0.1, closed at the
// test's cleanup.
type SignInStandin struct {
	URL     string
	signins atomic.Int32
}

// SignIns is how many times the right code was given.
func (s *SignInStandin) SignIns() int { return int(s.signins.Load()) }

// SignInSite is the stand-in's `sites:` entry named name.
func (s *SignInStandin) SignInSite(name string) string {
	return fmt.Sprintf(`  %s:
    url: %q
    input: "textarea.input"
    send: "button.send"
    answer: ".answer"
    loggedOut: "a.login"
`, name, s.URL)
}

const signInCookie = "standin_signin"

const signedOutPage = `<!doctype html><html><head><meta charset="utf-8"><title>sign in</title>
<style>body{margin:0;font:16px sans-serif} #signin{position:absolute;left:40px;top:120px;width:240px;height:80px;font-size:20px}
#f{position:absolute;left:40px;top:260px} #code{font-size:20px;width:200px}</style></head><body>
<a class="login" href="/">You are signed out.</a>
<button id="signin">Sign in</button>
<form id="f" hidden><label>SMS code <input id="code" autocomplete="off"></label></form>
<script>
const f = document.getElementById('f'), code = document.getElementById('code');
document.getElementById('signin').addEventListener('click', () => { f.hidden = false; code.focus(); });
f.addEventListener('submit', (e) => {
  e.preventDefault();
  fetch('/code', {method: 'POST', body: new URLSearchParams({code: code.value})}).then((r) => { if (r.ok) location.reload(); else code.value = ''; });
});
</script></body></html>`

const signedInPage = `<!doctype html><html><head><meta charset="utf-8"><title>chat</title></head><body>
<p>Welcome back.</p><textarea class="input"></textarea><button class="send">Send</button></body></html>`

// NewSignInStandin starts the stand-in.
func NewSignInStandin(t testing.TB) *SignInStandin {
	t.Helper()
	s := &SignInStandin{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if c, err := r.Cookie(signInCookie); err == nil && c.Value == "ok" {
			fmt.Fprint(w, signedInPage)
			return
		}
		fmt.Fprint(w, signedOutPage)
	})
	mux.HandleFunc("POST /code", func(w http.ResponseWriter, r *http.Request) {
		if r.PostFormValue("code") != SignInCode {
			http.Error(w, "wrong code", http.StatusForbidden)
			return
		}
		s.signins.Add(1)
		// Persistent, so the profile keeps the sign-in across launches.
		http.SetCookie(w, &http.Cookie{Name: signInCookie, Value: "ok", Path: "/", MaxAge: 24 * 3600, HttpOnly: true, SameSite: http.SameSiteLaxMode})
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/"
	return s
}
