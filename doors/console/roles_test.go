package console

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// consoleWithRoles is the fixture spool with one user of each role
// (password NAME-secret), a screenshot and a saved page of a3, and an
// audit line on a5.
func consoleWithRoles(t *testing.T) *config.Config {
	t.Helper()
	cfg := fixture.Spool(t)
	cfg.Console.Users = map[string]config.ConsoleUser{}
	for _, r := range []config.Role{config.RoleViewer, config.RoleOperator, config.RoleAdmin} {
		h, err := HashPassword(string(r) + "-secret")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Console.Users[string(r)] = config.ConsoleUser{Hash: h, Role: r}
	}
	cfg.Console.Session = config.Duration(time.Hour)
	logs := spool.NewLayout(cfg.Spool).Lane(taskfile.KindAPI, taskfile.DirLogs)
	for name, body := range map[string]string{"a3.1.png": "\x89PNG shot", "a3.1.html": "<p>the saved page</p>", "a3.log": "the log"} {
		if err := os.WriteFile(filepath.Join(logs, name), []byte(body), spool.FilePerm); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

// TestHTTPServer_ContentBehindLogin: with logins configured, a visitor
// without one gets 401 (or, a browser asking for a page, the login
// page) on every page, file and download, and the overview's counts
// only with console.public: counts; without logins the pages stay open.
func TestHTTPServer_ContentBehindLogin(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	content := []string{"/", "/?since=1h", "/api/status", "/metrics", "/task/api/a3", "/task/api/a3/shot/1", "/task/api/a3/page/1",
		"/task/api/a3/file/x.png", "/batch/b1", "/batch/b1?download=csv", "/batch/b1?download=jsonl", "/submit", "/import",
		"/live/a1", "/live/a1/frame", "/no/such/page"}
	for _, tc := range []struct {
		name   string
		logins bool
		public string
		open   map[string]bool // answered to a visitor without a login
	}{
		{name: "logins, nothing public", logins: true},
		{name: "logins, public counts", logins: true, public: config.PublicCounts, open: map[string]bool{"/": true, "/?since=1h": true, "/metrics": true}},
		{name: "no logins: read-only and open", open: map[string]bool{"/": true, "/?since=1h": true, "/api/status": true, "/metrics": true,
			"/task/api/a3": true, "/task/api/a3/shot/1": true, "/task/api/a3/page/1": true, "/batch/b1": true, "/batch/b1?download=csv": true, "/batch/b1?download=jsonl": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := consoleWithRoles(t)
			if !tc.logins {
				cfg.Console.Users = nil
			}
			cfg.Console.Public = tc.public
			h := startTestHTTP(t, cfg, nil)
			defer h.Stop()
			anon := newOperator(t, h)
			for _, p := range content {
				resp, body := anon.get(p)
				switch {
				case tc.open[p]:
					if resp.StatusCode != http.StatusOK {
						t.Errorf("GET %s without a login: %d, want 200", p, resp.StatusCode)
					}
				case !tc.logins:
				case resp.StatusCode != http.StatusUnauthorized:
					t.Errorf("GET %s without a login: %d, want 401: %.200s", p, resp.StatusCode, body)
				}
				if tc.logins && tc.open[p] && p != "/metrics" {
					for _, secret := range []string{"a3", "a4", "b1", "b2", "drop", "testhost", "/task/", "/batch/"} {
						if strings.Contains(body, secret) {
							t.Errorf("GET %s without a login shows %q", p, secret)
						}
					}
				}
			}
			if !tc.logins {
				return
			}
			// A browser asking for a page is sent to the login page.
			req, _ := http.NewRequest(http.MethodGet, anon.url("/task/api/a3"), nil)
			req.Header.Set("Accept", "text/html,application/xhtml+xml")
			if resp, _ := anon.do(req); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
				t.Errorf("a browser's GET /task/api/a3 without a login: %d to %q, want 303 to /login", resp.StatusCode, resp.Header.Get("Location"))
			}
			if resp, _ := anon.get("/login"); resp.StatusCode != http.StatusOK {
				t.Errorf("the login page: %d", resp.StatusCode)
			}
			// Logged in as a viewer, everything reads.
			v := newOperator(t, h)
			if r := v.login("viewer", "viewer-secret"); r.StatusCode != http.StatusSeeOther {
				t.Fatalf("login: %d", r.StatusCode)
			}
			for _, p := range []string{"/", "/api/status", "/metrics", "/task/api/a3", "/task/api/a3/shot/1", "/task/api/a3/page/1", "/batch/b1", "/batch/b1?download=csv", "/batch/b1?download=jsonl"} {
				if resp, _ := v.get(p); resp.StatusCode != http.StatusOK {
					t.Errorf("GET %s as a viewer: %d, want 200", p, resp.StatusCode)
				}
			}
		})
	}
}

// TestHTTPServer_Roles: each action answers 403 naming the role it needs
// to a user whose role falls short, and goes through for one whose role
// has it; the pages show only the buttons the role can use.
func TestHTTPServer_Roles(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := consoleWithRoles(t)
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	users := map[config.Role]*operator{}
	for _, r := range []config.Role{config.RoleViewer, config.RoleOperator, config.RoleAdmin} {
		o := newOperator(t, h)
		if resp := o.login(string(r), string(r)+"-secret"); resp.StatusCode != http.StatusSeeOther || o.csrf == "" {
			t.Fatalf("login %s: %d", r, resp.StatusCode)
		}
		users[r] = o
	}
	// The buttons: a viewer sees none; an operator the task's and the
	// lane's; the account's (live view) only an admin.
	for _, tc := range []struct {
		role       config.Role
		path       string
		want, none []string
	}{
		{config.RoleViewer, "/", []string{`id="logout"`}, []string{`action="/action"`, `class="cancel-run"`, `id="submit-link"`, `id="import-link"`, `class="live"`}},
		{config.RoleViewer, "/task/api/a5", nil, []string{`id="cancel"`, `id="set-priority"`}},
		{config.RoleViewer, "/batch/b1", nil, []string{`id="retry-failed"`, `id="bulk"`, `type="checkbox"`}},
		// The lane buttons say what can be done: the fixture's web lane is
		// paused, its api lane is not.
		{config.RoleOperator, "/", []string{`id="submit-link"`, `id="pause-api"`, `id="resume-web"`, `id="cancel-api-a4"`}, []string{`class="live"`, `value="release"`, `id="resume-api"`, `id="pause-web"`}},
		{config.RoleOperator, "/task/api/a5", []string{`id="cancel"`, `id="set-priority"`}, nil},
		{config.RoleOperator, "/batch/b1", []string{`id="retry-failed"`, `id="bulk-cancel"`, `type="checkbox"`}, nil},
		{config.RoleAdmin, "/", []string{`id="submit-link"`, `id="pause-api"`}, nil},
	} {
		_, body := users[tc.role].get(tc.path)
		for _, s := range tc.want {
			if !strings.Contains(body, s) {
				t.Errorf("%s as %s: no %s", tc.path, tc.role, s)
			}
		}
		for _, s := range tc.none {
			if strings.Contains(body, s) {
				t.Errorf("%s as %s shows %s", tc.path, tc.role, s)
			}
		}
	}
	type act struct {
		name   string
		method string
		path   string
		form   url.Values
		need   config.Role
	}
	acts := []act{
		{"cancel", "POST", "/action", url.Values{"do": {"cancel"}, "lane": {"api"}, "id": {"a6"}}, config.RoleOperator},
		{"retry", "POST", "/action", url.Values{"do": {"retry"}, "lane": {"api"}, "id": {"a3"}}, config.RoleOperator},
		{"priority", "POST", "/action", url.Values{"do": {"priority"}, "lane": {"api"}, "id": {"a7"}, "level": {"high"}}, config.RoleOperator},
		{"retry the batch's failed", "POST", "/action", url.Values{"do": {"retry-failed"}, "batch": {"b1"}}, config.RoleOperator},
		{"pause", "POST", "/action", url.Values{"do": {"pause"}, "lane": {"api"}}, config.RoleOperator},
		{"resume", "POST", "/action", url.Values{"do": {"resume"}, "lane": {"api"}}, config.RoleOperator},
		{"end a hold", "POST", "/action", url.Values{"do": {"release"}, "account": {"a1"}}, config.RoleAdmin},
		{"pause an account", "POST", "/action", url.Values{"do": {"pause-account"}, "account": {"ops1"}}, config.RoleAdmin},
		{"submit", "POST", "/submit", url.Values{"model": {"writer"}, "content": {"hello"}}, config.RoleOperator},
		{"import", "POST", "/import", url.Values{"step": {"submit"}}, config.RoleOperator},
		{"the submit form", "GET", "/submit", nil, config.RoleOperator},
		{"the import form", "GET", "/import", nil, config.RoleOperator},
		{"open the live view", "POST", "/live/a1/open", url.Values{}, config.RoleAdmin},
		{"the live view's page", "GET", "/live/a1", nil, config.RoleAdmin},
		{"the live view's frames", "GET", "/live/a1/frame", nil, config.RoleAdmin},
	}
	for _, a := range acts {
		for role, o := range users {
			t.Run(a.name+" as "+string(role), func(t *testing.T) {
				var resp *http.Response
				var body string
				if a.method == "GET" {
					resp, body = o.get(a.path)
				} else {
					f := url.Values{"csrf": {o.csrf}, "back": {"/"}}
					for k, v := range a.form {
						f[k] = v
					}
					resp, body = o.post(a.path, f, nil)
				}
				if role.Allows(a.need) {
					if resp.StatusCode == http.StatusForbidden {
						t.Errorf("%s as %s: 403 %s", a.name, role, body)
					}
					return
				}
				if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "needs the "+string(a.need)+" role") {
					t.Errorf("%s as %s: %d %q, want 403 naming the %s role", a.name, role, resp.StatusCode, body, a.need)
				}
			})
		}
	}
	if _, err := os.Stat(spool.NewLayout(cfg.Spool).CancelPath(taskfile.KindAPI, "a6")); err != nil {
		t.Errorf("the operator's cancel was not done: %v", err)
	}

}

// TestHTTPServer_AuditNames: an audit line names its user only to a
// reader who has logged in (without logins configured, nobody has).
func TestHTTPServer_AuditNames(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, tc := range []struct {
		name   string
		logins bool
		login  bool
		want   bool
	}{
		{name: "no logins configured", want: false},
		{name: "logged in", logins: true, login: true, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := consoleWithRoles(t)
			if !tc.logins {
				cfg.Console.Users = nil
			}
			st := spool.NewStore(cfg, nil)
			if err := st.AppendAudit(spool.AuditEntry{Time: time.Now(), User: "mallory-the-operator", Remote: "10.0.0.9", Action: "cancel", Tasks: []string{"api/a5"}}); err != nil {
				t.Fatal(err)
			}
			h := startTestHTTP(t, cfg, nil)
			defer h.Stop()
			o := newOperator(t, h)
			if tc.login {
				o.login("viewer", "viewer-secret")
			}
			resp, body := o.get("/task/api/a5")
			if resp.StatusCode != http.StatusOK || !strings.Contains(body, "cancel requested") {
				t.Fatalf("/task/api/a5: %d, no audit line: %.300s", resp.StatusCode, body)
			}
			if got := strings.Contains(body, "mallory-the-operator"); got != tc.want {
				t.Errorf("the audit line names its user: %v, want %v", got, tc.want)
			}
		})
	}
}

// TestHTTPServer_PauseAccount: an admin pauses one account from the
// status page: a paused hold that every host reads (its tasks wait, the
// session shows paused) until the hold is ended; an account twice, or
// one the config has no session of, is refused by name.
func TestHTTPServer_PauseAccount(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg, err := config.ParseConfig([]byte(`
host: testhost
models:
  - {name: thinker, kind: web, site: chat}
accounts:
  ops1: {site: chat}
  ops2: {site: chat}
sites:
  chat: {url: "http://127.0.0.1:1/", input: textarea, send: button, answer: .a}
`))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg.Spool, cfg.Web.Profiles, cfg.HTTP = filepath.Join(dir, "spool"), filepath.Join(dir, "profiles"), "127.0.0.1:0"
	if err := spool.NewLayout(cfg.Spool).Create(); err != nil {
		t.Fatal(err)
	}
	hash, err := HashPassword("admin-secret")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Console.Users = map[string]config.ConsoleUser{"admin": {Hash: hash, Role: config.RoleAdmin}}
	cfg.Console.Session = config.Duration(time.Hour)
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	o := newOperator(t, h)
	o.login("admin", "admin-secret")
	if _, body := o.get("/"); !strings.Contains(body, `<input type="hidden" name="do" value="pause-account"><input type="hidden" name="account" value="ops1"><button class="pause-account">`) {
		t.Fatalf("the status page offers no pause of ops1:\n%s", body)
	}
	act := func(do, account string) string {
		t.Helper()
		resp, _ := o.post("/action", url.Values{"csrf": {o.csrf}, "back": {"/"}, "do": {do}, "account": {account}}, nil)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s %s: %d", do, account, resp.StatusCode)
		}
		_, body := o.get("/")
		return body
	}
	body := act("pause-account", "ops1")
	st := spool.NewStore(cfg, nil)
	if hd, ok := st.AccountHold("ops1"); !ok || hd.Kind != taskfile.HoldPaused || !hd.Active(time.Now().Add(24*time.Hour)) || hd.Reason != "paused by admin (console)" {
		t.Fatalf("ops1's hold: %+v %v; want a paused hold that runs until ended", hd, ok)
	}
	ops1Row := regexp.MustCompile(`<tr class="session" data-account="ops1"[^\n]*</tr>`).FindString(body)
	if !strings.Contains(body, "account paused by an operator (until resumed): ops1") || !strings.Contains(ops1Row, `data-state="paused"`) ||
		strings.Contains(ops1Row, `class="pause-account"`) || !strings.Contains(body, `value="ops2"><button class="pause-account">`) {
		t.Errorf("the status page does not show ops1 paused (or still offers to pause it):\n%s", body)
	}
	for _, tc := range []struct{ account, want string }{{"ops1", "already"}, {"nobody", "not an account of the config"}} {
		if b := act("pause-account", tc.account); !strings.Contains(b, tc.want) {
			t.Errorf("pause %s: the flash lacks %q", tc.account, tc.want)
		}
	}
	act("release", "ops1")
	if _, ok := st.AccountHold("ops1"); ok {
		t.Errorf("ops1 is still held after the hold was ended")
	}
}
