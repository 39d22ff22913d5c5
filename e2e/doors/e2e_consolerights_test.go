//go:build unix

package doors

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/doors/console"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// consoleClient is one visitor of the console: its own cookies, never
// following a redirect (a 303 to /login is an answer here).
type consoleClient struct {
	t    *testing.T
	base string
	c    *http.Client
	csrf string
}

func newConsoleClient(t *testing.T, base string) *consoleClient {
	jar, _ := cookiejar.New(nil)
	return &consoleClient{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (c *consoleClient) get(p string) (*http.Response, string) {
	c.t.Helper()
	resp, err := c.c.Get(c.base + p)
	if err != nil {
		c.t.Fatalf("GET %s: %v", p, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp, string(b)
}

func (c *consoleClient) post(p string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.base+p, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.base)
	resp, err := c.c.Do(req)
	if err != nil {
		c.t.Fatalf("POST %s: %v", p, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var consoleCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (c *consoleClient) login(user, pw string) {
	c.t.Helper()
	if resp, body := c.post("/login", url.Values{"user": {user}, "password": {pw}}); resp.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("login %s: %d %s", user, resp.StatusCode, body)
	}
	_, body := c.get("/")
	m := consoleCSRF.FindStringSubmatch(body)
	if m == nil {
		c.t.Fatalf("no CSRF token on %s's status page", user)
	}
	c.csrf = m[1]
}

var consoleLink = regexp.MustCompile(`(?:href|src)="([^"]*)"`)

// crawl follows every same-server link (href, src) of every page from
// "/", and returns each address that answered 200.
func (c *consoleClient) crawl(limit int) []string {
	c.t.Helper()
	seen := map[string]bool{"/": true}
	queue, ok := []string{"/"}, []string{}
	for len(queue) > 0 && len(seen) < limit {
		p := queue[0]
		queue = queue[1:]
		resp, body := c.get(p)
		if resp.StatusCode != http.StatusOK {
			continue
		}
		ok = append(ok, p)
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			continue
		}
		here, _ := url.Parse(c.base + p)
		for _, m := range consoleLink.FindAllStringSubmatch(body, -1) {
			u, err := here.Parse(strings.ReplaceAll(m[1], "&amp;", "&")) // "?since=1h" is this page's
			if err != nil || u.Host != here.Host || u.Scheme != here.Scheme {
				continue // another site's, or not a link to follow
			}
			u.Fragment = ""
			l := u.RequestURI()
			if seen[l] || l == "/login" {
				continue
			}
			seen[l] = true
			queue = append(queue, l)
		}
	}
	return ok
}

// TestE2E_ConsoleRights is issue 50's console acceptance, through
// `spoolgate run`: with console users of each role, an anonymous client
// gets 401 or the login page on every page and download an admin's crawl
// of the console reaches (task pages, screenshots, saved pages, the
// batch page and its downloads, the JSON); a viewer reads but gets 403,
// naming the role, on every action, and nothing is done; a planted
// record with attempt times from year 1 to 9999 leaves its batch's page
// under 200 KB.
func TestE2E_ConsoleRights(t *testing.T) {
	t.Parallel()
	api := rig.APIStand(t, apistand.Options{})
	hash := func(pw string) string {
		h, err := console.HashPassword(pw)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tail := fmt.Sprintf(`models:
  - {name: writer, kind: api, baseURL: %q, model: stand-in, timeout: 10s}
console:
  users:
    boss: %q
    ops: {hash: %q, role: operator}
    reader: {hash: %q, role: viewer}
`, api.URL(), hash("boss-password"), hash("ops-password"), hash("reader-password"))
	r := rig.New(t, rig.Opts{Tail: tail, HTTP: "127.0.0.1:0", Retries0: true})
	d := r.Start()
	base := rig.StatusURL(t, d)

	r.Submit(rig.Task{ID: "good", Model: "writer", Content: "the secret content", Batch: "rights"},
		rig.Task{ID: "bad", Model: "writer", Content: "[[fail=1]] the other secret", Batch: "rights"})
	r.Final(taskfile.KindAPI, "good", time.Minute)
	r.Final(taskfile.KindAPI, "bad", time.Minute)
	// A failed attempt's screenshot and saved page, as a web attempt
	// leaves them (the API lane writes none).
	logs := r.L.Lane(taskfile.KindAPI, taskfile.DirLogs)
	for name, body := range map[string]string{"bad.1.png": "\x89PNG\r\n\x1a\n the shot", "bad.1.html": "<p>the saved page</p>"} {
		if err := os.WriteFile(filepath.Join(logs, name), []byte(body), spool.FilePerm); err != nil {
			t.Fatal(err)
		}
	}
	// One unsealed record no daemon wrote, its attempts from year 1 to 9999.
	y1, y9999 := time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	planted := taskfile.Task{TaskID: "absurd", ModelKind: taskfile.KindAPI, Model: "writer", Content: "x", Batch: "planted", State: taskfile.StateSuccess,
		Attempt: 2, SubmittedAt: time.Now().Add(-time.Hour), StartedAt: y1, FinishedAt: y9999,
		Attempts: []taskfile.AttemptRecord{{N: 1, ClaimedAt: y1, StartedAt: y1, EndedAt: y9999, Outcome: taskfile.AttemptRetried},
			{N: 2, ClaimedAt: y9999, StartedAt: y9999, EndedAt: y9999, Outcome: taskfile.AttemptSuccess}}}
	data, err := planted.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.L.TaskPath(taskfile.KindAPI, taskfile.DirDone, "absurd"), data, spool.FilePerm); err != nil {
		t.Fatal(err)
	}

	// The admin's crawl: every page and file the console links to.
	admin := newConsoleClient(t, base)
	admin.login("boss", "boss-password")
	pages := admin.crawl(500)
	t.Logf("the admin's crawl reached %d addresses: %q", len(pages), pages)
	for _, want := range []string{"/task/api/good", "/task/api/bad/shot/1", "/task/api/bad/page/1", "/batch/rights", "/batch/rights?download=jsonl", "/batch/rights?download=csv", "/batch/planted"} {
		if !slices.Contains(pages, want) {
			t.Errorf("the crawl did not reach %s: %q", want, pages)
		}
	}
	pages = append(pages, "/api/status", "/metrics")

	// Anonymous: the login page, nothing else.
	anon := newConsoleClient(t, base)
	for _, p := range pages {
		resp, body := anon.get(p)
		switch {
		case resp.StatusCode == http.StatusUnauthorized:
		case resp.StatusCode == http.StatusSeeOther && resp.Header.Get("Location") == "/login":
		default:
			t.Errorf("GET %s without a login: %d, want 401 or the login page", p, resp.StatusCode)
		}
		for _, secret := range []string{"the secret content", "the other secret", "the saved page", "the shot", "Answer:"} {
			if strings.Contains(body, secret) {
				t.Errorf("GET %s without a login shows %q", p, secret)
			}
		}
	}
	if resp, _ := anon.get("/login"); resp.StatusCode != http.StatusOK {
		t.Errorf("the login page: %d", resp.StatusCode)
	}

	// A viewer reads everything, and may do nothing.
	viewer := newConsoleClient(t, base)
	viewer.login("reader", "reader-password")
	for _, p := range []string{"/task/api/good", "/task/api/bad/shot/1", "/batch/rights?download=jsonl"} {
		if resp, _ := viewer.get(p); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s as a viewer: %d", p, resp.StatusCode)
		}
	}
	if resp, body := viewer.get("/batch/rights"); resp.StatusCode != http.StatusOK || strings.Contains(body, `id="bulk"`) || strings.Contains(body, `type="checkbox"`) {
		t.Errorf("a viewer's batch page: %d, with the bulk form or its boxes: %v", resp.StatusCode, strings.Contains(body, `id="bulk"`))
	}
	for _, a := range []struct {
		path string
		form url.Values
		need string
	}{
		{"/action", url.Values{"do": {"retry"}, "lane": {"api"}, "id": {"bad"}}, "operator"},
		{"/action", url.Values{"do": {"retry-failed"}, "batch": {"rights"}, "confirm": {"yes"}}, "operator"},
		{"/action", url.Values{"do": {"cancel"}, "lane": {"api"}, "id": {"good"}}, "operator"},
		{"/action", url.Values{"do": {"bulk"}, "op": {"cancel"}, "task": {"api/good"}, "confirm": {"yes"}}, "operator"},
		{"/action", url.Values{"do": {"priority"}, "lane": {"api"}, "id": {"good"}, "level": {"high"}}, "operator"},
		{"/action", url.Values{"do": {"pause"}, "lane": {"api"}}, "operator"},
		{"/action", url.Values{"do": {"resume"}, "lane": {"api"}}, "operator"},
		{"/action", url.Values{"do": {"release"}, "account": {"a1"}}, "admin"},
		{"/submit", url.Values{"model": {"writer"}, "content": {"from a viewer"}, "taskId": {"viewer-task"}}, "operator"},
		{"/import", url.Values{"step": {"submit"}}, "operator"},
		{"/live/a1/open", url.Values{}, "admin"},
	} {
		a.form.Set("csrf", viewer.csrf)
		a.form.Set("back", "/")
		resp, body := viewer.post(a.path, a.form)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "needs the "+a.need+" role") {
			t.Errorf("POST %s do=%s as a viewer: %d %q, want 403 naming the %s role", a.path, a.form.Get("do"), resp.StatusCode, body, a.need)
		}
	}
	if dir := r.L.Locate(taskfile.KindAPI, "bad"); dir != taskfile.DirFailed {
		t.Errorf("a viewer's retry: bad is in %s", dir)
	}
	if _, err := os.Stat(r.L.Paused(taskfile.KindAPI)); err == nil {
		t.Error("a viewer's pause paused the lane")
	}
	if hits, _ := rig.FilesContaining(t, r.Spool, "from a viewer"); len(hits) > 0 {
		t.Errorf("a viewer's submit dropped %q", hits)
	}
	// An operator's retry goes through.
	ops := newConsoleClient(t, base)
	ops.login("ops", "ops-password")
	if resp, body := ops.post("/action", url.Values{"do": {"retry"}, "lane": {"api"}, "id": {"bad"}, "csrf": {ops.csrf}, "back": {"/"}}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("an operator's retry: %d %s", resp.StatusCode, body)
	}

	// The planted record's batch page.
	resp, body := admin.get("/batch/planted")
	t.Logf("/batch/planted: %d bytes", len(body))
	if resp.StatusCode != http.StatusOK || len(body) > 200<<10 {
		t.Errorf("/batch/planted: %d, %d KB, want 200 and under 200 KB", resp.StatusCode, len(body)>>10)
	}
}
