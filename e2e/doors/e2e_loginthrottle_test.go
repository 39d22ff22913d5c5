//go:build unix

package doors

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/doors/console"
	"github.com/spoolgate/spoolgate/e2e/rig"
)

// TestE2E_LoginThrottle is issue 50's lock-out through `spoolgate run`:
// behind a trusted proxy (the test's client, 127.0.0.1, listed in
// console.trustedProxies), three wrong passwords for alice from address A
// leave A slowed (429) and do not stop her right password from B.
func TestE2E_LoginThrottle(t *testing.T) {
	t.Parallel()
	hash, err := console.HashPassword("alice-secret")
	if err != nil {
		t.Fatal(err)
	}
	tail := fmt.Sprintf(`models:
  - {name: writer, kind: api, baseURL: "http://127.0.0.1:9/v1", model: stand-in, timeout: 10s}
console:
  users:
    alice: %q
  trustedProxies: [127.0.0.1/32]
`, hash)
	r := rig.New(t, rig.Opts{Tail: tail, HTTP: "127.0.0.1:0"})
	d := r.Start()
	base := rig.StatusURL(t, d)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	const A, B = "198.51.100.7", "203.0.113.9"
	for _, tc := range []struct {
		name, pw, from string
		want           int
	}{
		{"wrong from A 1", "x", A, http.StatusUnauthorized},
		{"wrong from A 2", "x", A, http.StatusUnauthorized},
		{"wrong from A 3", "x", A, http.StatusUnauthorized},
		{"A is slowed", "alice-secret", A, http.StatusTooManyRequests},
		{"B logs alice in", "alice-secret", B, http.StatusSeeOther},
	} {
		form := url.Values{"user": {"alice"}, "password": {tc.pw}}
		req, _ := http.NewRequest(http.MethodPost, base+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", tc.from)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Fatalf("%s: %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}
