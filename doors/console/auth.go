package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool/config"
)

// Logins, sessions and CSRF (issue 40). Without console.users or
// console.token nobody logs in and the pages stay read-only. A session is
// a random id in an HttpOnly, SameSite=Strict cookie (Secure over TLS),
// kept in this process's memory only: a restart logs everyone out. Every
// request that changes state is a POST that carries the session's CSRF
// token in its form, and comes from this server's own pages (Origin, and
// Sec-Fetch-Site when the browser sends it). Failed logins are slowed
// without locking anyone out (throttle.go): failures are counted per
// user and source address, so failures from one address hold the right
// password from another at most a small fixed delay; one address failing
// for many users is slowed too, and a global budget of failures guards
// against a spray. After failLimit failures of a (user, address), its
// next attempt waits 2 s, then 4, 8... up to failMaxWait, and one made
// earlier is refused unchecked (429, Retry-After). Behind a proxy the
// address is X-Forwarded-For's, only from console.trustedProxies.

const (
	sessionCookie = "spoolgate_session"
	failLimit     = 3
	failMaxWait   = 5 * time.Minute
	failForget    = 30 * time.Minute // a failure older than this no longer counts
	maxSessions   = 1000             // oldest sessions go first beyond this
	maxFailKeys   = 10000
)

type session struct {
	id, user, csrf string
	role           config.Role // the user's (roles.go), fixed at login
	expires        time.Time
	flash          string // one message for the next page
	flashHref      string // what it links to (the task submitted, the batch imported), "" for none
	staged         *stagedImport
}

type failRec struct {
	n    int
	last time.Time
}

type auth struct {
	users  map[string]string      // name: password hash
	roles  map[string]config.Role // name (config.TokenUser for the token): role (roles.go)
	public bool                   // console.public: counts
	token  string
	ttl    time.Duration
	secure bool
	now    func() time.Time

	verify chan struct{} // two password checks at a time

	mu       sync.Mutex
	sessions map[string]*session
	fails    map[string]*failRec

	// Throttling (throttle.go): the fixed delay, the global budget of
	// failures (under mu), the proxies whose X-Forwarded-For is believed.
	userDelay time.Duration
	global    budget
	trusted   []netip.Prefix
}

func newAuth(c config.ConsoleConfig, now func() time.Time) *auth {
	if !c.LoginOn() {
		return nil
	}
	a := &auth{users: map[string]string{}, token: c.Token, ttl: c.Session.D(), secure: c.TLSOn(), now: now,
		verify: make(chan struct{}, 2), sessions: map[string]*session{}, fails: map[string]*failRec{}}
	a.setRoles(c)
	a.userDelay, a.global, a.trusted = userDelay, budget{burst: globalBurst, refill: globalRefill}, c.TrustedProxyPrefixes()
	return a
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// remoteIP is the request's peer address without its port.
func remoteIP(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// wait is how long a login for user from ip must still wait: the
// pair's backoff, the address's, and the global budget's; never the
// user's failures from other addresses (holdFor).
func (a *auth) wait(ip, user string) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	return max(backoff(a.fails[pairKey(user, ip)], failLimit, now), backoff(a.fails[ipKey(ip)], ipFailLimit, now), a.global.wait(now))
}

func (a *auth) failed(ip, user string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if len(a.fails) > maxFailKeys {
		for k, f := range a.fails {
			if now.Sub(f.last) > failForget {
				delete(a.fails, k)
			}
		}
	}
	a.global.spend(now)
	for _, k := range []string{pairKey(user, ip), ipKey(ip), userKey(user)} {
		f := a.fails[k]
		if f == nil || now.Sub(f.last) > failForget {
			f = &failRec{}
			a.fails[k] = f
		}
		f.n++
		f.last = now
	}
}

// check verifies a login: a user and password, or (no user) the shared
// token. An unknown user costs a hash check too.
func (a *auth) check(user, pw string) (string, bool) {
	a.verify <- struct{}{}
	defer func() { <-a.verify }()
	if user == "" || user == config.TokenUser {
		if a.token == "" {
			_, _ = checkPassword(dummyHash(), pw)
			return "", false
		}
		ok, _ := checkPassword(a.token, pw)
		return config.TokenUser, ok
	}
	h, known := a.users[user]
	if !known {
		_, _ = checkPassword(dummyHash(), pw)
		return "", false
	}
	ok, _ := checkPassword(h, pw)
	return user, ok
}

// dummyHash is checked for an unknown user, so that a login for one takes
// as long as for a known one.
// Made at the first login, not at start: every command links this package.
var dummyHash = sync.OnceValue(func() string {
	h, _ := HashPassword("spoolgate: no such user")
	return h
})

func (a *auth) newSession(user string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if len(a.sessions) >= maxSessions {
		var oldest *session
		for _, s := range a.sessions {
			if oldest == nil || s.expires.Before(oldest.expires) {
				oldest = s
			}
		}
		delete(a.sessions, oldest.id)
	}
	s := &session{id: randomToken(), user: user, csrf: randomToken(), role: a.roles[user], expires: now.Add(a.ttl)}
	a.sessions[s.id] = s
	delete(a.fails, "user:"+user)
	return s
}

// session is the request's live session, or nil; each use extends it.
func (a *auth) session(r *http.Request) *session {
	if a == nil {
		return nil
	}
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[c.Value]
	if s == nil {
		return nil
	}
	now := a.now()
	if now.After(s.expires) {
		delete(a.sessions, s.id)
		return nil
	}
	s.expires = now.Add(a.ttl)
	return s
}

func (a *auth) end(s *session) {
	a.mu.Lock()
	delete(a.sessions, s.id)
	a.mu.Unlock()
}

// takeFlash returns and clears the session's message and its link.
func (a *auth) takeFlash(s *session) (msg, href string) {
	if s == nil {
		return "", ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	msg, href = s.flash, s.flashHref
	s.flash, s.flashHref = "", ""
	return msg, href
}

func (a *auth) setFlash(s *session, msg string) { a.setFlashLink(s, msg, "") }

// setFlashLink is a message that links to what it is about (a path of
// this server).
func (a *auth) setFlashLink(s *session, msg, href string) {
	a.mu.Lock()
	s.flash, s.flashHref = safetext.Line(msg), href
	a.mu.Unlock()
}

func (a *auth) cookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: sessionCookie, Value: value, Path: "/", HttpOnly: true, Secure: a.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: maxAge}
}

// sameOrigin refuses a request another site made: an Origin that is not
// this server's, or a Sec-Fetch-Site other than same-origin (a browser's
// own navigation, "none", is allowed).
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true // not a browser's cross-site form post: those carry Origin
	}
	u, err := url.Parse(o)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// authorize is the gate of every state-changing request: a POST, from
// this server's pages, with a live session and its CSRF token. It answers
// the refusal itself and returns nil.
func (h *httpServer) authorize(w http.ResponseWriter, r *http.Request) *session {
	L := labelsFor(r).actions()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, L.OnlyPost, http.StatusMethodNotAllowed)
		return nil
	}
	if !sameOrigin(r) {
		http.Error(w, L.CrossOrigin, http.StatusForbidden)
		return nil
	}
	if h.auth == nil {
		http.Error(w, L.ReadOnly, http.StatusForbidden)
		return nil
	}
	s := h.auth.session(r)
	if s == nil {
		http.Error(w, L.NoSession, http.StatusUnauthorized)
		return nil
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
	var tok string
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			h.tooLarge(w, r, err)
			return nil
		}
	}
	tok = r.PostFormValue("csrf")
	if tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(s.csrf)) != 1 {
		http.Error(w, L.BadCSRF, http.StatusForbidden)
		return nil
	}
	return s
}

func (h *httpServer) loginPage(w http.ResponseWriter, r *http.Request) {
	L := labelsFor(r)
	v := loginView{L: L, A: L.actions(), Token: h.auth != nil && h.auth.token != "", Users: h.auth != nil && len(h.auth.users) > 0}
	if h.auth == nil {
		v.Err = v.A.ReadOnly
		h.render(w, loginTmpl, &v, http.StatusNotFound)
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		h.render(w, loginTmpl, &v, http.StatusOK)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, v.A.OnlyPost, http.StatusMethodNotAllowed)
		return
	}
	if !sameOrigin(r) {
		http.Error(w, v.A.CrossOrigin, http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	user := strings.TrimSpace(r.PostFormValue("user"))
	pw := r.PostFormValue("password")
	ip := clientIP(r, h.auth.trusted)
	v.User = user
	if wait := h.auth.wait(ip, user); wait > 0 {
		secs := int(wait.Round(time.Second) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		v.Err = v.A.TooMany(secs)
		h.log.Warn("login refused: too many failures", "user", user, "remote", ip, "wait", wait.Round(time.Second))
		h.render(w, loginTmpl, &v, http.StatusTooManyRequests)
		return
	}
	hold(r.Context(), h.auth.holdFor(user))
	name, ok := h.auth.check(user, pw)
	if !ok {
		h.auth.failed(ip, user)
		h.log.Warn("login failed", "user", user, "remote", ip)
		v.Err = v.A.BadLogin
		h.render(w, loginTmpl, &v, http.StatusUnauthorized)
		return
	}
	s := h.auth.newSession(name)
	h.auth.succeeded(ip, user)
	http.SetCookie(w, h.auth.cookie(s.id, 0))
	h.audit(r, name, "login", nil, "", "")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (h *httpServer) logout(w http.ResponseWriter, r *http.Request) {
	s := h.authorize(w, r)
	if s == nil {
		return
	}
	h.auth.end(s)
	h.live.CloseOwner(s.id, "logged out") // the account's lock goes with the login
	http.SetCookie(w, h.auth.cookie("", -1))
	h.audit(r, s.user, "logout", nil, "", "")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
