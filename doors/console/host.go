package console

import (
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/spoolgate/spoolgate/spool/config"
)

// hostGuard answers only requests whose Host header names this server, so
// a page on another site that rebinds its own DNS name to this address
// (DNS rebinding) cannot read the status from an operator's browser: its
// requests carry its own name. Allowed, with any port: localhost, loopback
// addresses (127.0.0.0/8, ::1), the host of the `http:` address and the
// address actually bound; when listening on all interfaces (0.0.0.0, ::,
// or no host), any IP address and this machine's names (os.Hostname and
// the config's `host`). A rebinding page can send none of these.
type hostGuard struct {
	names map[string]bool // lower case, no trailing dot
	ips   []net.IP
	anyIP bool
	log   *slog.Logger
	next  http.Handler
}

func newHostGuard(listenHost string, bound net.Addr, identity string, log *slog.Logger, next http.Handler) *hostGuard {
	g := &hostGuard{names: map[string]bool{"localhost": true}, log: log, next: next}
	add := func(name string) {
		if name = normHost(name); name == "" {
			return
		}
		if ip := net.ParseIP(name); ip != nil {
			g.ips = append(g.ips, ip)
			return
		}
		g.names[name] = true
	}
	add(listenHost)
	if ta, ok := bound.(*net.TCPAddr); ok && !ta.IP.IsUnspecified() {
		g.ips = append(g.ips, ta.IP)
	}
	if ip := net.ParseIP(listenHost); listenHost == "" || (ip != nil && ip.IsUnspecified()) {
		g.anyIP = true
		if hn, err := os.Hostname(); err == nil {
			add(hn)
		}
		add(identity)
	}
	return g
}

func normHost(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// allowed reports whether a Host header value names this server.
func (g *hostGuard) allowed(hostHeader string) bool {
	host := hostHeader
	if h, port, err := net.SplitHostPort(hostHeader); err == nil {
		if port == "" || strings.Trim(port, "0123456789") != "" {
			return false
		}
		host = h
	} else if strings.HasPrefix(hostHeader, "[") || strings.Count(hostHeader, ":") > 0 {
		// "[::1]" without a port, or garbage such as "a:b:c".
		host = strings.TrimSuffix(strings.TrimPrefix(hostHeader, "["), "]")
		if net.ParseIP(host) == nil {
			return false
		}
	}
	host = normHost(host)
	if host == "" {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsLoopback() || g.anyIP {
			return true
		}
		for _, own := range g.ips {
			if own.Equal(ip) {
				return true
			}
		}
		return false
	}
	return g.names[host]
}

func (g *hostGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.allowed(r.Host) {
		g.log.Debug("refused a request: its Host does not name this server", "host", r.Host, "remote", r.RemoteAddr)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		http.Error(w, "spoolgate: the Host header does not name this server (DNS-rebinding protection): use its address, localhost or 127.0.0.1",
			http.StatusMisdirectedRequest)
		return
	}
	g.next.ServeHTTP(w, r)
}

// warnIfOpen warns, once at start, when the page can be reached from
// other machines, and says exactly what a visitor without a login can
// read there (gate, roles.go).
func warnIfOpen(log *slog.Logger, addr net.Addr, cc config.ConsoleConfig) {
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsLoopback() {
		return
	}
	a := addr.String()
	if cc.LoginOn() && !cc.TLSOn() {
		log.Warn("console logins over plain HTTP on the network: passwords and session cookies cross it in clear text, and anyone on the path can act as a logged-in operator; set console.tls (cert and key) or put an HTTPS proxy in front",
			"addr", a)
	}
	switch {
	case !cc.LoginOn():
		log.Warn("status page open to the network without a login: anyone who can reach "+a+
			" can read every task's prompt, content, result and log, its screenshots, saved pages and generated files, the batches' results (CSV, JSON Lines), the spool path and the audit lines (without user names); set console.users (or console.token) to put them behind a login, or http: 127.0.0.1:PORT to keep it to this machine",
			"addr", a)
	case cc.PublicCountsOn():
		log.Warn("console on the network with console.public: counts: anyone who can reach "+a+
			" without a login sees each lane's task counts, progress and ETA, and /metrics (counts by lane, state and account, and the running tasks' ids in the heartbeat gauge); every task's text, file and result, the batches and the audit lines need a login",
			"addr", a)
	default:
		log.Info("console on the network: without a login, "+a+" answers only its login page; every page, file and download needs a login",
			"addr", a)
	}
}
