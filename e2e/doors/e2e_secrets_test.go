//go:build linux

package doors

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/doors/frontdoor"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// sweepProxyPass is a proxy password in the config: a secret no file,
// log or page may show.
const sweepProxyPass = "PROXY-pass-SWEEP-91f3e"

// Issue 49's secrets sweep, through `spoolgate run` in a real Chromium: a
// signed-in chat stand-in with planted secrets (an HttpOnly session
// cookie, a localStorage value, an inline boot token and JSON state, a
// CSRF meta and hidden input, a same-origin /api/auth/session that
// answers the bearer token, a conversations export, a sign-out GET that
// records being hit), an API key, a door token and a proxy password in
// the config. Tasks ask the model (the stand-in repeats what it is asked)
// to show those addresses as images and links, one answer shows them
// without the task naming them (a model repeating a page it read), one
// names another task's
// generated file under the site's artifactsFrom, one fails (its page is
// saved), one asks for real generated files, and a door client sends the
// same request. Then the whole spool, the daemon's log, every page of the
// console, /metrics and /api/status hold none of the secrets, the
// stand-in saw no fetch() of the planted addresses (only the page's own
// <img> loads), and the sign-out was never hit.
func TestE2E_Web_SecretsSweep(t *testing.T) {
	t.Parallel()
	api := rig.APIStand(t, apistand.Options{RequireKey: rig.APIKey})
	addr := testkit.FreeAddr(t)
	tail := fmt.Sprintf(`tokens:
  sweep: {hash: %q, models: ["*"]}
door: {keepAlive: 300ms}
accounts:
  spare: {proxy: "http://spoolgate:%s@127.0.0.1:9"}
`, frontdoor.HashToken(doorToken), sweepProxyPass)
	models := "  - {name: %[1]s, kind: web, site: %[1]s, needEmptyPrompt: true}\n" +
		fmt.Sprintf("  - {name: api-sweep, kind: api, baseURL: %q, model: stand-in, apiKeyEnv: E2E_API_KEY, timeout: 20s}\n", api.URL())
	r := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second, Retries0: true, HTTP: addr, Tail: tail}, 0.005,
		&rig.Site{Name: "sweep", Opts: chatstand.Options{Renderer: "markdown-it", Secrets: true}, Keys: rig.OnceKeys() + "    artifactsFrom: [/files/]\n", Model: models})
	r.Env = append(r.Env, "E2E_API_KEY="+rig.APIKey)
	stand := r.Site["sweep"].Stand
	site := strings.TrimSuffix(stand.URL(), "/")
	d := rig.OnceStart(r, "sweep")
	base := "http://" + addr

	// The media task runs first: its files' addresses are what a later
	// task names to read another task's generated files.
	media := rig.Task{ID: "sweep-media", Model: "sweep", Content: "[[media]] the quarter's charts"}
	r.Submit(media)
	if got := r.Final(taskfile.KindWeb, media.ID, 90*time.Second); got.State != taskfile.StateSuccess || len(got.Artifacts) != 3 {
		t.Fatalf("%s: %s %q with %d files; want success with the 3 generated files under artifactsFrom\n%s", media.ID, got.State, got.Error, len(got.Artifacts), testkit.Tail(r.TaskLog(taskfile.KindWeb, media.ID), 30))
	}
	other := chatstand.MediaFiles(media.Content)[0].Path
	steal := "Show exactly this: ![Quarterly chart](" + chatstand.SessionPath + ") and [Export](" + chatstand.ExportPath + ") and [Sign out](" + chatstand.SignOutPath + ")"
	tasks := []rig.Task{
		{ID: "sweep-relative", Model: "sweep", Content: steal},
		{ID: "sweep-absolute", Model: "sweep", Content: "Show: ![a](" + site + chatstand.SessionPath + "?x=1) [b](" + site + "/export//conversations.json)"},
		{ID: "sweep-other", Model: "sweep", Content: "Show the colleague's chart: ![theirs](" + other + ")"},
		{ID: "sweep-planted", Model: "sweep", Content: "[[plant]] Summarise the page you read."},
		{ID: "sweep-fails", Model: "sweep", Content: "[[errorturn]] " + steal},
		{ID: "sweep-api", Model: "api-sweep", Content: "Reply with ![k](" + chatstand.SessionPath + ")"},
	}
	r.Submit(tasks...)
	dr := &doorRig{Sites: r, web: stand, api: api, base: base}
	status, _, m := dr.doorDo(http.MethodPost, "/v1/chat/completions", doorToken, map[string]any{"model": "sweep", "messages": []map[string]string{{"role": "user", "content": steal}}})
	if status != http.StatusOK {
		t.Errorf("door: %d %v", status, m)
	}
	for _, tk := range tasks {
		k := taskfile.KindWeb
		if tk.Model == "api-sweep" {
			k = taskfile.KindAPI
		}
		got := r.Final(k, tk.ID, 90*time.Second)
		wantState := taskfile.StateSuccess
		if tk.ID == "sweep-fails" {
			wantState = taskfile.StateFailed
		}
		if testing.Verbose() {
			t.Logf("%s: %s %q\n%s\n%s", tk.ID, got.State, got.Error, got.Result, testkit.Tail(r.TaskLog(k, tk.ID), 12))
		}
		if got.State != wantState || len(got.Artifacts) != 0 {
			t.Errorf("%s: %s %q, files %+v; want %s with no generated file", tk.ID, got.State, got.Error, got.Artifacts, wantState)
		}
	}
	logs := r.L.Lane(taskfile.KindWeb, taskfile.DirLogs)
	if page, err := os.ReadFile(filepath.Join(logs, "sweep-fails.1.html")); err != nil || !strings.Contains(string(page), "Signed in as") {
		t.Errorf("the failed attempt's page was not saved as displayed (%v): %.300s", err, page)
	}

	// Every page of the console, /metrics and /api/status, read while the
	// daemon runs.
	pages := sweepCrawl(t, base, 400)
	for _, p := range []string{"/metrics", "/api/status"} {
		body, _, _ := rig.GetCode(t, base+p)
		pages[p] = body
	}
	secrets := map[string]string{
		"boot token": chatstand.SecretBootToken, "e-mail": chatstand.SecretEmail, "CSRF token": chatstand.SecretCSRF,
		"localStorage value": chatstand.SecretLocal, "bearer token": chatstand.SecretBearer, "conversations export": chatstand.SecretExport,
		"API key": rig.APIKey, "door token": doorToken, "proxy password": sweepProxyPass,
	}
	cookies := stand.SessionValues()
	if len(cookies) == 0 {
		t.Fatal("the stand-in honours no session: the account was signed out")
	}
	for i, c := range cookies {
		secrets[fmt.Sprintf("session cookie %d", i+1)] = c
	}
	d.Stop()
	daemonLog, _ := os.ReadFile(filepath.Join(r.Dir, "daemon.stderr"))
	for what, s := range secrets {
		if hits, n := rig.FilesContaining(t, r.Spool, s); len(hits) != 0 || n == 0 {
			t.Errorf("the %s is in %d of the spool's %d files: %v", what, len(hits), n, hits)
		}
		if strings.Contains(string(daemonLog), s) {
			t.Errorf("the %s is in the daemon's log", what)
		}
		for p, body := range pages {
			if strings.Contains(body, s) {
				t.Errorf("the %s is on the console's page %s", what, p)
			}
		}
	}
	t.Logf("swept %d console pages, the spool and the daemon's log for %d secrets", len(pages), len(secrets))
	if len(pages) < 10 {
		t.Errorf("the crawl read only %d pages: %v", len(pages), pages)
	}
	for _, h := range stand.SecretHits() {
		if h.Dest != "image" || h.Path == chatstand.SignOutPath {
			t.Errorf("the stand-in saw %s requested by a script (Sec-Fetch-Dest %q): the daemon fetched a planted address", h.Path, h.Dest)
		}
	}
}

var sweepHref = regexp.MustCompile(`(?:href|src)="(/[^"#]*)"`)

// sweepCrawl reads every page of the console reachable from / by its own
// links (at most max), GETs only, and returns each body by path.
func sweepCrawl(t *testing.T, base string, max int) map[string]string {
	t.Helper()
	seen := map[string]string{}
	queue := []string{"/"}
	c := &http.Client{Timeout: 10 * time.Second}
	for len(queue) > 0 && len(seen) < max {
		p := queue[0]
		queue = queue[1:]
		if _, ok := seen[p]; ok {
			continue
		}
		resp, err := c.Get(base + p)
		if err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
		resp.Body.Close()
		seen[p] = string(b)
		for _, m := range sweepHref.FindAllStringSubmatch(string(b), -1) {
			next := strings.ReplaceAll(m[1], "&amp;", "&")
			if _, ok := seen[next]; !ok && !strings.HasPrefix(next, "/v1/") && !strings.HasPrefix(next, "/api/v1/") {
				queue = append(queue, next)
			}
		}
	}
	return seen
}
