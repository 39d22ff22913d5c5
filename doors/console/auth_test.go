package console

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/crypto/bcrypt"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// operator is a browser of one user: its cookies and the CSRF token its
// pages carry.
type operator struct {
	t    *testing.T
	h    *httpServer
	c    *http.Client
	csrf string
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func newOperator(t *testing.T, h *httpServer) *operator {
	jar, _ := cookiejar.New(nil)
	return &operator{t: t, h: h, c: &http.Client{Jar: jar, Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (o *operator) url(p string) string { return "http://" + o.h.Addr().String() + p }

func (o *operator) do(req *http.Request) (*http.Response, string) {
	o.t.Helper()
	resp, err := o.c.Do(req)
	if err != nil {
		o.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (o *operator) get(p string) (*http.Response, string) {
	req, _ := http.NewRequest(http.MethodGet, o.url(p), nil)
	return o.do(req)
}

// post sends form values with this server's Origin unless hdr says
// otherwise ("Origin": "" leaves it out).
func (o *operator) post(p string, form url.Values, hdr map[string]string) (*http.Response, string) {
	req, _ := http.NewRequest(http.MethodPost, o.url(p), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://"+o.h.Addr().String())
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	return o.do(req)
}

func (o *operator) login(user, pw string) *http.Response {
	o.t.Helper()
	resp, _ := o.post("/login", url.Values{"user": {user}, "password": {pw}}, nil)
	if resp.StatusCode == http.StatusSeeOther {
		_, body := o.get("/")
		if m := csrfRe.FindStringSubmatch(body); m != nil {
			o.csrf = m[1]
		}
	}
	return resp
}

// consoleWithUsers is the fixture spool with two console users.
func consoleWithUsers(t *testing.T) *config.Config {
	cfg := fixture.Spool(t)
	hw, _ := HashPassword("wang-secret")
	hl, _ := HashPassword("li-secret")
	cfg.Console.Users = map[string]config.ConsoleUser{"王芳": {Hash: hw, Role: config.RoleAdmin}, "li": {Hash: hl, Role: config.RoleAdmin}}
	cfg.Console.Session = config.Duration(time.Hour)
	return cfg
}

func TestHTTPServer_ActionGate(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := consoleWithUsers(t)
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	wang, li, anon := newOperator(t, h), newOperator(t, h), newOperator(t, h)
	if r := wang.login("王芳", "wang-secret"); r.StatusCode != http.StatusSeeOther || wang.csrf == "" {
		t.Fatalf("login: %d, csrf %q", r.StatusCode, wang.csrf)
	}
	if r := li.login("li", "li-secret"); r.StatusCode != http.StatusSeeOther || li.csrf == "" {
		t.Fatalf("login li: %d", r.StatusCode)
	}
	cancelFile := spool.NewLayout(cfg.Spool).CancelPath(taskfile.KindAPI, "a5")
	form := func(csrf string) url.Values {
		return url.Values{"do": {"cancel"}, "lane": {"api"}, "id": {"a5"}, "back": {"/task/api/a5"}, "csrf": {csrf}}
	}
	host := "http://" + h.Addr().String()
	for _, tc := range []struct {
		name string
		as   *operator
		csrf string
		get  bool
		hdr  map[string]string
		want int
	}{
		{name: "no session", as: anon, csrf: wang.csrf, want: http.StatusUnauthorized},
		{name: "no CSRF token", as: wang, csrf: "", want: http.StatusForbidden},
		{name: "a wrong CSRF token", as: wang, csrf: "x" + wang.csrf, want: http.StatusForbidden},
		{name: "another user's CSRF token", as: wang, csrf: li.csrf, want: http.StatusForbidden},
		{name: "by GET", as: wang, csrf: wang.csrf, get: true, want: http.StatusMethodNotAllowed},
		{name: "cross-origin", as: wang, csrf: wang.csrf, hdr: map[string]string{"Origin": "http://evil.example"}, want: http.StatusForbidden},
		{name: "cross-site fetch", as: wang, csrf: wang.csrf, hdr: map[string]string{"Origin": "", "Sec-Fetch-Site": "cross-site"}, want: http.StatusForbidden},
		{name: "origin on another port", as: wang, csrf: wang.csrf, hdr: map[string]string{"Origin": strings.Replace(host, ":", ":1", 2)}, want: http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var resp *http.Response
			var body string
			if tc.get {
				resp, body = tc.as.get("/action?" + form(tc.csrf).Encode())
			} else {
				resp, body = tc.as.post("/action", form(tc.csrf), tc.hdr)
			}
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			if _, err := os.Stat(cancelFile); err == nil {
				t.Fatalf("the task was canceled: %s", cancelFile)
			}
		})
	}
	for _, p := range []string{"/submit", "/import", "/logout"} {
		if resp, _ := anon.post(p, url.Values{"csrf": {wang.csrf}}, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST %s without a session: %d", p, resp.StatusCode)
		}
	}
	// The real thing: done, and written to the audit trail.
	if resp, body := wang.post("/action", form(wang.csrf), nil); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/task/api/a5" {
		t.Fatalf("cancel: %d %s", resp.StatusCode, body)
	}
	if _, err := os.Stat(cancelFile); err != nil {
		t.Fatalf("no cancel request: %v", err)
	}
	_, page := wang.get("/task/api/a5")
	if !strings.Contains(page, "cancel requested by <span class=\"who\" translate=\"no\">王芳</span> at ") || !strings.Contains(page, `id="flash"`) {
		t.Errorf("the task page does not tell who canceled it:\n%s", page)
	}
	// Logged out, the same session and token do nothing.
	if resp, _ := wang.post("/logout", url.Values{"csrf": {wang.csrf}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	_ = os.Remove(cancelFile)
	if resp, _ := wang.post("/action", form(wang.csrf), nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("after logout: %d", resp.StatusCode)
	}
	if _, err := os.Stat(cancelFile); err == nil {
		t.Error("canceled after logout")
	}
}

func TestHTTPServer_SessionCookie(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := startTestHTTP(t, consoleWithUsers(t), nil)
	defer h.Stop()
	o := newOperator(t, h)
	resp := o.login("li", "li-secret")
	var c *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == sessionCookie {
			c = k
		}
	}
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || len(c.Value) < 40 {
		t.Fatalf("session cookie %+v", c)
	}
	// A login posted from another site (login CSRF) is refused.
	if resp, _ := newOperator(t, h).post("/login", url.Values{"user": {"li"}, "password": {"li-secret"}}, map[string]string{"Origin": "http://evil.example"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin login: %d", resp.StatusCode)
	}
}

func TestHTTPServer_ReadOnlyWithoutUsers(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	o := newOperator(t, h)
	if resp, _ := o.post("/login", url.Values{"user": {"x"}, "password": {"y"}}, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("login without users: %d", resp.StatusCode)
	}
	if resp, _ := o.post("/action", url.Values{"do": {"cancel"}, "lane": {"api"}, "id": {"a5"}}, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("action without users: %d", resp.StatusCode)
	}
	_, page := o.get("/")
	if strings.Contains(page, "<form") || strings.Contains(page, "/login") {
		t.Errorf("a read-only page offers forms or a login:\n%s", page)
	}
}

func TestHTTPServer_FailedLoginsSlowed(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := startTestHTTP(t, consoleWithUsers(t), nil)
	defer h.Stop()
	o := newOperator(t, h)
	for i := range failLimit {
		if r := o.login("li", "wrong"); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i+1, r.StatusCode)
		}
	}
	// Now even the right password waits: refused unchecked.
	r := o.login("li", "li-secret")
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Fatalf("after %d failures: %d, Retry-After %q", failLimit, r.StatusCode, r.Header.Get("Retry-After"))
	}
}

func TestAuth_Wait(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	a := newAuth(config.ConsoleConfig{Token: "$argon2id$x"}, func() time.Time { return now })
	for _, tc := range []struct {
		fails   int
		advance time.Duration
		want    time.Duration
	}{
		{fails: 2, want: 0},
		{fails: 1, want: 2 * time.Second},
		{fails: 1, want: 4 * time.Second},
		{advance: 3 * time.Second, want: time.Second},
		{advance: time.Second, want: 0},
		{fails: 20, want: failMaxWait},
		{advance: failForget + time.Second, want: 0},
	} {
		for range tc.fails {
			a.failed("10.0.0.1", "li")
		}
		now = now.Add(tc.advance)
		if got := a.wait("10.0.0.1", "li"); got != tc.want { // the pair's failures
			t.Errorf("after %+v: wait %s, want %s", tc, got, tc.want)
		}
	}
}

func TestCheckPassword(t *testing.T) {
	h, err := HashPassword("пароль 密码")
	if err != nil {
		t.Fatal(err)
	}
	bh, err := bcrypt.GenerateFromPassword([]byte("U*U"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		hash, pw string
		ok       bool
		bad      bool
	}{
		{hash: h, pw: "пароль 密码", ok: true},
		{hash: h, pw: "пароль"},
		{hash: string(bh), pw: "U*U", ok: true},
		{hash: string(bh), pw: "U*V"},
		{hash: "$argon2id$v=19$m=99999999,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", pw: "x", bad: true},
		{hash: "$argon2id$v=19$garbage", pw: "x", bad: true},
	} {
		ok, err := checkPassword(tc.hash, tc.pw)
		if ok != tc.ok || (err != nil) != tc.bad {
			t.Errorf("checkPassword(%.20s, %q) = %v, %v", tc.hash, tc.pw, ok, err)
		}
	}
}

func TestHTTPServer_AuditForeign(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := consoleWithUsers(t)
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	o := newOperator(t, h)
	o.login("li", "li-secret")
	if resp, body := o.post("/action", url.Values{"do": {"priority"}, "level": {"high"}, "lane": {"api"}, "id": {"a6"}, "back": {"/"}, "csrf": {o.csrf}}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("priority: %d %s", resp.StatusCode, body)
	}
	// The task page's priority form starts on the task's level.
	if _, body := o.get("/task/api/a6"); !strings.Contains(body, `<option value="high" selected>high</option>`) || strings.Contains(body, `<option value="normal" selected>normal</option>`) {
		t.Errorf("the priority form does not show the task's level, high:\n%s", body)
	}
	// A colleague plants lines: one unsealed, one with a made-up seal.
	month := time.Now().UTC().Format("2006-01") + ".log"
	f, err := os.OpenFile(filepath.Join(cfg.Spool, spool.AuditDir, month), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	f.WriteString(`{"time":"` + now + `","user":"boss","remote":"1.2.3.4","action":"cancel","tasks":["api/a6"]}` + "\n")
	f.WriteString(`{"time":"` + now + `","user":"ceo","remote":"1.2.3.4","action":"cancel","tasks":["api/a6"]}` + "\t#sg-seal v1 " + strings.Repeat("ab", 32) + "\n")
	f.Close()
	_, page := o.get("/task/api/a6")
	for _, want := range []string{"priority set by <span class=\"who\" translate=\"no\">li</span> at ", `class="audit-line foreign">foreign line (not written by a daemon of this installation): cancel requested by <span class="who" translate="no">boss</span>`, `class="audit-line foreign">foreign line (not written by a daemon of this installation): cancel requested by <span class="who" translate="no">ceo</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("task page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, `class="audit-line">cancel requested by`) {
		t.Error("a planted line is shown as genuine")
	}
}
