package console

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// Login throttling (issue 50), without lock-out. Failures are counted per
// (user, source address): after failLimit of them, that pair waits 2 s,
// then 4, 8... up to failMaxWait, and an attempt made earlier is refused
// unchecked (429, Retry-After). So failures from address A slow alice
// from A only: her right password from address B is never refused for
// them, at most held userDelay before it is checked (once alice has
// failLimit failures from anywhere), which slows a guesser who spreads
// over addresses without locking her out. One address failing for many
// users is slowed the same way after ipFailLimit failures (an IPv6
// address counts as its /64, which one host can rotate through). And a
// global budget, globalBurst failures refilled one per globalRefill,
// guards against a spray of many users from many addresses: while it is
// spent, every login waits for it (429) — a spray slows everyone, but
// only while it lasts, and the right password goes through as soon as a
// failure's worth of budget is back. The budget also bounds the failure
// records: at most globalBurst + failForget/globalRefill failures (three
// records each) are ever recent enough to be kept.
//
// Behind a reverse proxy every client shares the proxy's address, which
// would make one address of them all: the client's address is taken from
// X-Forwarded-For only when the peer is in console.trustedProxies.

const (
	ipFailLimit  = 20
	userDelay    = 500 * time.Millisecond
	globalBurst  = 100
	globalRefill = time.Second
	maxKeyUser   = 80 // longer names are no user's (config: at most 64 bytes)
)

// budget is the global budget of failures: a bucket of globalBurst
// tokens refilled one per globalRefill; each failure takes one.
type budget struct {
	tokens float64
	at     time.Time
	burst  float64
	refill time.Duration
}

// level refills the bucket up to now and returns its tokens.
func (b *budget) level(now time.Time) float64 {
	if b.at.IsZero() {
		b.tokens, b.at = b.burst, now
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(b.burst, b.tokens+float64(d)/float64(b.refill))
		b.at = now
	}
	return b.tokens
}

// wait is how long until a whole token is back (0 when there is one).
func (b *budget) wait(now time.Time) time.Duration {
	if l := b.level(now); l < 1 {
		return time.Duration((1 - l) * float64(b.refill))
	}
	return 0
}

func (b *budget) spend(now time.Time) {
	b.level(now)
	b.tokens--
}

func pairKey(user, ip string) string { return "pair:" + keyUser(user) + "\x00" + ip }
func userKey(user string) string     { return "user:" + keyUser(user) }

func keyUser(user string) string {
	if len(user) > maxKeyUser {
		return user[:maxKeyUser]
	}
	return user
}

// ipKey is the address failures from it are counted under: an IPv6
// address by its /64, the block one host is usually given.
func ipKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || a.Unmap().Is4() {
		return "ip:" + ip
	}
	p, _ := a.Prefix(64)
	return "ip:" + p.String()
}

// backoff is how long after its last failure rec still holds attempts:
// 2 s at limit failures, doubling up to failMaxWait; 0 below limit or
// once the failures are forgotten.
func backoff(f *failRec, limit int, now time.Time) time.Duration {
	if f == nil || f.n < limit || now.Sub(f.last) > failForget {
		return 0
	}
	d := min(time.Duration(1<<min(f.n-limit+1, 20))*time.Second, failMaxWait)
	return max(f.last.Add(d).Sub(now), 0)
}

// holdFor is the fixed delay a login for user from ip waits before it is
// checked: userDelay once the user has failLimit recent failures, from
// any address, and none from this one has backed it off.
func (a *auth) holdFor(user string) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	f := a.fails[userKey(user)]
	if f == nil || f.n < failLimit || a.now().Sub(f.last) > failForget {
		return 0
	}
	return a.userDelay
}

// succeeded forgets the failures of user from ip (and of user: a session
// forgets those already).
func (a *auth) succeeded(ip, user string) {
	a.mu.Lock()
	delete(a.fails, pairKey(user, ip))
	a.mu.Unlock()
}

// hold waits d, or less if the request is given up.
func hold(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// clientIP is the address a request comes from: its peer's, or, when the
// peer is a trusted proxy, the nearest address in X-Forwarded-For that is
// not one (the proxies append, so the entries right of it are theirs and
// anything left of it is the client's to forge).
func clientIP(r *http.Request, trusted []netip.Prefix) string {
	peer := remoteIP(r)
	if !isTrusted(peer, trusted) {
		return peer
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := parseHop(strings.TrimSpace(hops[i]))
		if err != nil {
			break // not a proxy's writing: the last good address stands
		}
		client = a.String()
		if !isTrusted(client, trusted) {
			break
		}
	}
	return client
}

// parseHop reads one X-Forwarded-For entry: an address, maybe with a port.
func parseHop(s string) (netip.Addr, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), nil
	}
	a, err := netip.ParseAddr(s)
	return a.Unmap(), err
}

func isTrusted(ip string, trusted []netip.Prefix) bool {
	if len(trusted) == 0 {
		return false
	}
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// client is the request's client address for the audit trail and the
// live view: X-Forwarded-For's only from a trusted proxy, as for logins.
func (h *httpServer) client(r *http.Request) string {
	if h.auth == nil {
		return remoteIP(r)
	}
	return clientIP(r, h.auth.trusted)
}
