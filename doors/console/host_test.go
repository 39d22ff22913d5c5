package console

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestHostGuard_Allowed(t *testing.T) {
	hn, _ := os.Hostname()
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7311}
	lan := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 7311}
	wild := &net.TCPAddr{IP: net.IPv4zero, Port: 7311}
	for _, tc := range []struct {
		name       string
		listenHost string
		bound      net.Addr
		host       string
		want       bool
	}{
		{"loopback ip and port", "127.0.0.1", loop, "127.0.0.1:7311", true},
		{"loopback ip, no port", "127.0.0.1", loop, "127.0.0.1", true},
		{"other loopback ip", "127.0.0.1", loop, "127.0.0.2:7311", true},
		{"localhost", "127.0.0.1", loop, "localhost:7311", true},
		{"localhost upper case, trailing dot", "127.0.0.1", loop, "LocalHost.:7311", true},
		{"ipv6 loopback", "127.0.0.1", loop, "[::1]:7311", true},
		{"ipv6 loopback, no port", "127.0.0.1", loop, "[::1]", true},
		{"rebinding name", "127.0.0.1", loop, "evil.example:7311", false},
		{"rebinding name, no port", "127.0.0.1", loop, "evil.example", false},
		{"localhost as a subdomain", "127.0.0.1", loop, "localhost.evil.example:7311", false},
		{"ip as a subdomain", "127.0.0.1", loop, "127.0.0.1.evil.example", false},
		{"empty", "127.0.0.1", loop, "", false},
		{"empty port", "127.0.0.1", loop, "localhost:", false},
		{"bad port", "127.0.0.1", loop, "localhost:80x", false},
		{"garbage", "127.0.0.1", loop, "a:b:c", false},
		{"lan ip listened on", "10.0.0.5", lan, "10.0.0.5:7311", true},
		{"other lan ip", "10.0.0.5", lan, "10.0.0.6:7311", false},
		{"listen name", "render-02.corp", lan, "Render-02.corp:7311", true},
		{"bound ip of a listen name", "render-02.corp", lan, "10.0.0.5:7311", true},
		{"other name beside a listen name", "render-02.corp", lan, "evil.example:7311", false},
		{"wildcard: any ip", "0.0.0.0", wild, "192.168.1.20:7311", true},
		{"wildcard: ipv6 literal", "::", wild, "[fe80::1]:7311", true},
		{"wildcard: host name", "", wild, hn + ":7311", true},
		{"wildcard: config host", "0.0.0.0", wild, "render-07:7311", true},
		{"wildcard: rebinding name", "0.0.0.0", wild, "evil.example:7311", false},
		{"specific ip: config host not added", "10.0.0.5", lan, "render-07:7311", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newHostGuard(tc.listenHost, tc.bound, "render-07", slog.New(slog.DiscardHandler), nil)
			if got := g.allowed(tc.host); got != tc.want {
				t.Errorf("allowed(%q) listening on %q = %v, want %v", tc.host, tc.listenHost, got, tc.want)
			}
		})
	}
}

// TestHTTPServer_HostHeader drives a real server on 127.0.0.1 with
// forged Host headers, as a DNS-rebinding page in a browser would send:
// each is refused with 421 on every path and learns nothing.
func TestHTTPServer_HostHeader(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	var logs syncBuf
	h, err := Start(context.Background(), spool.NewStore(cfg, nil), nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Stop()
	addr := h.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	do := func(path, host string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("GET", "http://"+addr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := testClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{"/", "/api/status", "/metrics"} {
		for _, host := range []string{"evil.example:" + port, "evil.example", "localhost.evil.example:" + port, "127.0.0.1.nip.example:" + port} {
			code, body := do(path, host)
			if code != http.StatusMisdirectedRequest {
				t.Errorf("GET %s Host %s = %d, want 421", path, host, code)
			}
			if strings.Contains(body, cfg.Spool) || strings.Contains(body, "a4") || strings.Contains(body, "b1") {
				t.Errorf("GET %s Host %s: the refusal shows the spool: %.200s", path, host, body)
			}
		}
		for _, host := range []string{addr, "localhost:" + port, "127.0.0.1", "[::1]:" + port} {
			if code, _ := do(path, host); code != http.StatusOK {
				t.Errorf("GET %s Host %s = %d, want 200", path, host, code)
			}
		}
	}
	// HTTP/1.0 may leave Host out; it names nothing, so it is refused too.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET /api/status HTTP/1.0\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("HTTP/1.0 without Host = %d, want 421", resp.StatusCode)
	}
	if strings.Contains(logs.String(), "open to the network") {
		t.Errorf("a loopback server warned: %s", logs.String())
	}
}

func TestWarnIfOpen(t *testing.T) {
	open := &net.TCPAddr{IP: net.IPv4zero, Port: 7311}
	users := config.ConsoleConfig{Users: map[string]config.ConsoleUser{"li": {Hash: "$2a$x", Role: config.RoleViewer}}}
	counts := users
	counts.Public = config.PublicCounts
	tls := users
	tls.TLS = config.TLSConfig{Cert: "c.pem", Key: "k.pem"}
	for _, tc := range []struct {
		name     string
		addr     net.Addr
		cc       config.ConsoleConfig
		want     []string // in the log
		not      []string
		warnings int
	}{
		{name: "loopback v4", addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7311}},
		{name: "loopback v6", addr: &net.TCPAddr{IP: net.IPv6loopback, Port: 7311}},
		{name: "every address, no logins", addr: open, warnings: 1,
			want: []string{"level=WARN", "anyone who can reach " + open.String(), "prompt, content, result and log", "screenshots, saved pages and generated files", "spool path", "console.users"}},
		{name: "v6 unspecified, no logins", addr: &net.TCPAddr{IP: net.IPv6unspecified, Port: 7311}, warnings: 1, want: []string{"prompt, content, result and log"}},
		{name: "a LAN address, no logins", addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 7311}, warnings: 1, want: []string{"prompt, content, result and log"}},
		{name: "logins over plain HTTP", addr: open, cc: users, warnings: 1, want: []string{"plain HTTP", "answers only its login page"}, not: []string{"prompt, content"}},
		{name: "logins over TLS", addr: open, cc: tls, want: []string{"level=INFO", "answers only its login page"}, not: []string{"plain HTTP"}},
		{name: "public counts", addr: open, cc: counts, warnings: 2, want: []string{"console.public: counts", "task counts, progress and ETA", "/metrics"}, not: []string{"prompt, content"}},
	} {
		var logs syncBuf
		warnIfOpen(slog.New(slog.NewTextHandler(&logs, nil)), tc.addr, tc.cc)
		got := logs.String()
		if n := strings.Count(got, "level=WARN"); n != tc.warnings {
			t.Errorf("%s: %d warnings, want %d: %s", tc.name, n, tc.warnings, got)
		}
		for _, want := range tc.want {
			if !strings.Contains(got, want) {
				t.Errorf("%s: log %q lacks %q", tc.name, got, want)
			}
		}
		for _, not := range tc.not {
			if strings.Contains(got, not) {
				t.Errorf("%s: log %q says %q", tc.name, got, not)
			}
		}
	}
}

// TestHTTPServer_PageEscapes: the page and /api/status show a hostile
// batch name and taskId without control or bidi characters.
func TestHTTPServer_PageEscapes(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	fixture.PutHostileTask(t, cfg, taskfile.DirRunning)
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	for _, path := range []string{"/", "/api/status"} {
		_, body := get(t, h, path)
		for _, bad := range []string{"\x1b", "\u009b", "\u202e"} {
			if strings.Contains(string(body), bad) {
				t.Errorf("%s holds %q raw", path, bad)
			}
		}
	}
	if _, body := get(t, h, "/"); !strings.Contains(string(body), `\x1b[2J\x1b]0;pwned\x07\x9b31m\u202eevil`) {
		t.Errorf("the page does not show the batch escaped")
	}
	if _, body := get(t, h, "/api/status"); !strings.Contains(string(body), `"batch": "\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202eevil"`) {
		t.Errorf("/api/status does not keep the batch, \\u-escaped")
	}
}
