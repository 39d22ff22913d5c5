package console

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/spool/config"
)

// TestHTTPServer_LoginThrottle is issue 50's lock-out: three wrong
// passwords for li from address A do not stop her right one from address
// B (held at most the fixed delay), while A itself is still slowed; the
// addresses are told by a trusted proxy's X-Forwarded-For, and an
// untrusted peer's is ignored; a spray of one failure per user and
// address spends the global budget, which then holds every login.
func TestHTTPServer_LoginThrottle(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var servers []*httpServer
	defer func() { // before goleak's check
		for _, h := range servers {
			h.Stop()
		}
	}()
	start := func(proxies ...string) *httpServer {
		cfg := consoleWithUsers(t)
		cfg.Console.TrustedProxies = proxies
		h := startTestHTTP(t, cfg, nil)
		servers = append(servers, h)
		return h
	}
	proxied := start("127.0.0.1/32") // the tests' client is 127.0.0.1: the proxy
	direct := start()                // no proxy trusted: X-Forwarded-For is anyone's
	spray := start("127.0.0.0/8")
	spray.auth.mu.Lock()
	spray.auth.global = budget{burst: 4, refill: time.Hour}
	spray.auth.mu.Unlock()

	const A, B = "198.51.100.7", "203.0.113.9"
	for _, tc := range []struct {
		name     string
		h        *httpServer
		user, pw string
		xff      string
		want     int
		maxTook  time.Duration // 0: not measured
		minTook  time.Duration
	}{
		{name: "A: li wrong 1", h: proxied, user: "li", pw: "x", xff: A, want: http.StatusUnauthorized},
		{name: "A: li wrong 2", h: proxied, user: "li", pw: "x", xff: A, want: http.StatusUnauthorized},
		{name: "A: li wrong 3", h: proxied, user: "li", pw: "x", xff: A, want: http.StatusUnauthorized},
		{name: "A is slowed for li, even with the right password", h: proxied, user: "li", pw: "li-secret", xff: A, want: http.StatusTooManyRequests},
		{name: "a forged entry left of A is A's own writing", h: proxied, user: "li", pw: "li-secret", xff: B + ", " + A, want: http.StatusTooManyRequests},
		{name: "B logs li in, held at most the fixed delay", h: proxied, user: "li", pw: "li-secret", xff: B, want: http.StatusSeeOther,
			minTook: userDelay, maxTook: userDelay + 3*time.Second},
		{name: "another user from A is not slowed by li's failures", h: proxied, user: "王芳", pw: "wang-secret", xff: A, want: http.StatusSeeOther},

		{name: "untrusted peer: li wrong 1 claiming A", h: direct, user: "li", pw: "x", xff: A, want: http.StatusUnauthorized},
		{name: "untrusted peer: li wrong 2 claiming A", h: direct, user: "li", pw: "x", xff: A, want: http.StatusUnauthorized},
		{name: "untrusted peer: li wrong 3 claiming A", h: direct, user: "li", pw: "x", xff: A, want: http.StatusUnauthorized},
		{name: "untrusted peer: claiming B changes nothing", h: direct, user: "li", pw: "li-secret", xff: B, want: http.StatusTooManyRequests},

		{name: "spray 1", h: spray, user: "li", pw: "x", xff: "192.0.2.1", want: http.StatusUnauthorized},
		{name: "spray 2", h: spray, user: "王芳", pw: "x", xff: "192.0.2.2", want: http.StatusUnauthorized},
		{name: "spray 3", h: spray, user: "nobody", pw: "x", xff: "192.0.2.3", want: http.StatusUnauthorized},
		{name: "spray 4", h: spray, user: "admin", pw: "x", xff: "192.0.2.4", want: http.StatusUnauthorized},
		{name: "the budget is spent: a fresh address and user wait", h: spray, user: "li", pw: "li-secret", xff: "192.0.2.200", want: http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOperator(t, tc.h)
			t0 := time.Now()
			resp, _ := o.post("/login", url.Values{"user": {tc.user}, "password": {tc.pw}}, map[string]string{"X-Forwarded-For": tc.xff})
			took := time.Since(t0)
			if resp.StatusCode != tc.want {
				t.Fatalf("%d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
				t.Errorf("429 without Retry-After")
			}
			if tc.maxTook > 0 && (took < tc.minTook || took > tc.maxTook) {
				t.Errorf("took %s, want %s to %s", took, tc.minTook, tc.maxTook)
			}
		})
	}
}

func TestAuth_WaitKeys(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	a := newAuth(config.ConsoleConfig{Token: "$argon2id$x"}, func() time.Time { return now })
	for range failLimit {
		a.failed("10.0.0.1", "li")
	}
	for range ipFailLimit {
		a.failed("2001:db8:1:2::5", "someone")
	}
	for _, tc := range []struct {
		ip, user string
		wait     bool
		hold     time.Duration
	}{
		{"10.0.0.1", "li", true, userDelay},         // the pair
		{"10.0.0.2", "li", false, userDelay},        // another address: held, not refused
		{"10.0.0.1", "bob", false, 0},               // another user from the address
		{"2001:db8:1:2::77", "li", true, userDelay}, // the same /64 failed for many users
		{"2001:db8:1:3::77", "bob", false, 0},       // another /64
	} {
		if got := a.wait(tc.ip, tc.user); (got > 0) != tc.wait {
			t.Errorf("%s from %s: wait %s", tc.user, tc.ip, got)
		}
		if got := a.holdFor(tc.user); got != tc.hold {
			t.Errorf("%s: hold %s, want %s", tc.user, got, tc.hold)
		}
	}
}

func TestClientIP(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"no proxy", "192.0.2.1:5000", nil, "192.0.2.1"},
		{"an untrusted peer's header is ignored", "192.0.2.1:5000", []string{"198.51.100.7"}, "192.0.2.1"},
		{"a trusted proxy names the client", "127.0.0.1:5000", []string{"198.51.100.7"}, "198.51.100.7"},
		{"a trusted proxy without the header", "127.0.0.1:5000", nil, "127.0.0.1"},
		{"the client's own entries are not believed", "127.0.0.1:5000", []string{"1.1.1.1, 198.51.100.7"}, "198.51.100.7"},
		{"a chain of trusted proxies", "127.0.0.1:5000", []string{"1.1.1.1, 198.51.100.7, 10.0.0.3"}, "198.51.100.7"},
		{"headers in order", "127.0.0.1:5000", []string{"1.1.1.1", "198.51.100.7, 10.0.0.3"}, "198.51.100.7"},
		{"with a port", "127.0.0.1:5000", []string{"198.51.100.7:443"}, "198.51.100.7"},
		{"IPv6", "127.0.0.1:5000", []string{"[2001:db8::1]:443"}, "2001:db8::1"},
		{"junk from the proxy", "127.0.0.1:5000", []string{"unknown"}, "127.0.0.1"},
		{"junk left of the client", "127.0.0.1:5000", []string{"junk, 198.51.100.7"}, "198.51.100.7"},
		{"all proxies", "127.0.0.1:5000", []string{"10.0.0.9, 10.0.0.3"}, "10.0.0.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/login", nil)
			r.RemoteAddr = tc.peer
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientIP(r, trusted); got != tc.want {
				t.Errorf("%s, want %s", got, tc.want)
			}
		})
	}
}
