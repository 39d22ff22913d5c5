//go:build unix

package rig

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes/notify"
	"github.com/spoolgate/spoolgate/spool/config"
)

// from e2e_accounts_test.go
// LoginAs signs profile in to the stand-in as account, as `spoolgate login
// SITE --account NAME` and a person would.
func LoginAs(t *testing.T, cfg *config.Config, profile, url, account string) {
	t.Helper()
	if err := os.MkdirAll(profile, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := browser.Launch(context.Background(), cfg, profile, true, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(b.Context(), 15*time.Second)
	err = chromedp.Do(ctx, chromedp.Navigate(url+"login?user="+account))
	cancel()
	b.Close()
	if err != nil {
		t.Fatalf("login %s: %v", account, err)
	}
	testkit.NoProcs(t, profile)
}

// from e2e_sites_test.go
// Site is one stand-in page and how the config names it.
type Site struct {
	Name  string
	Opts  chatstand.Options
	Keys  string // the site's selector keys after url (YAML, 4 spaces)
	Model string // models: entries (YAML list items); %s is the site name
	Stand *chatstand.Server
}

// from e2e_sites_test.go
// Sites is a rig with several stand-in sites, the profile signed in to
// each (each stand-in has its own cookie: cookies are per host, not port).
type Sites struct {
	*Rig
	Site    map[string]*Site
	Profile string
}

// from e2e_sites_test.go
func NewSites(t *testing.T, o Opts, scale float64, sites ...*Site) *Sites {
	t.Helper()
	testkit.NeedChromium(t)
	var models, siteYAML strings.Builder
	m := map[string]*Site{}
	for _, s := range sites {
		// Signed in as demo (the stand-in's SignedIn), each site with a
		// cookie of its own on the one profile.
		s.Opts.Scale, s.Opts.CookieName, s.Opts.SignedIn = scale, "chatstand_"+s.Name, "demo"
		stand, err := chatstand.Start(s.Opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stand.Close() })
		s.Stand = stand
		m[s.Name] = s
		fmt.Fprintf(&siteYAML, "  %s:\n    url: %q\n%s", s.Name, stand.URL(), s.Keys)
		model := s.Model
		if model == "" {
			model = "  - {name: %[1]s, kind: web, site: %[1]s, needEmptyPrompt: true}\n"
		}
		fmt.Fprintf(&models, model, s.Name)
	}
	// o.Tail, if given, follows the sites (notify:, accounts:).
	o.Tail = "models:\n" + models.String() + "sites:\n" + siteYAML.String() + o.Tail
	if o.Heartbeat == 0 {
		o.Heartbeat = 500 * time.Millisecond
	}
	if o.StaleAfter == 0 {
		o.StaleAfter = 2 * time.Second
	}
	r := &Sites{Rig: New(t, o), Site: m}
	r.Profile = browser.ProfileDir(r.Cfg)
	t.Cleanup(func() { testkit.NoProcs(t, r.Profile) })
	return r
}

// from e2e_once_test.go
// OnceKeys are the stand-in's keys (standin-md), the conversation keys
// (conversation, userMessage, history, notFound) included.
func OnceKeys() string {
	keys := testkit.StandinMarkdownSite("x")
	return keys[strings.Index(keys, "    input:"):]
}

// from e2e_once_test.go
// OnceDaemon is a `spoolgate run` of the rig that the test may SIGKILL.
type OnceDaemon struct{ *Daemon }

// from e2e_once_test.go
func OnceStart(r *Sites, name string) OnceDaemon {
	r.T.Helper()
	d := OnceDaemon{r.Start()}
	d.Name = name
	// Up (signals handled, spool recovered): a stop right after start is
	// then a clean stop, not a SIGTERM the process never caught.
	d.WaitReady()
	return d
}

// from e2e_once_test.go
// kill SIGKILLs the daemon (its browser is left behind, as after a real
// crash: the next daemon's self-check kills it) and waits for it; its log
// is kept as NAME.stderr, since the next daemon's start truncates
// Daemon.stderr.
func (d OnceDaemon) Kill() {
	_ = d.Cmd.Process.Signal(syscall.SIGKILL)
	<-d.Done
	kept := filepath.Join(filepath.Dir(d.log), d.Name+".stderr")
	if os.Rename(d.log, kept) == nil {
		d.log = kept
	}
}

// from e2e_svg_test.go
// StatusURL waits for the daemon's "status page" log line and returns
// its address.
func StatusURL(t *testing.T, d *Daemon) string {
	t.Helper()
	re := regexp.MustCompile(`status page.*url=(http://127\.0\.0\.1:\d+)/`)
	var url string
	testkit.Wait(t, "the status page's address in the log", 20*time.Second, func() bool {
		m := re.FindStringSubmatch(d.LogText())
		if m != nil {
			url = m[1]
		}
		return m != nil
	})

	return url
}

// from e2e_svg_test.go
func Get(t *testing.T, url string) (string, http.Header) {
	t.Helper()
	body, hdr, code := GetCode(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d", url, code)
	}
	return body, hdr
}

// from e2e_svg_test.go
func GetCode(t *testing.T, url string) (string, http.Header, int) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.Header, resp.StatusCode
}

// from e2e_notify_test.go
// Hook is a webhook receiver on 127.0.0.1. It answers the first
// len(fail) POSTs with those statuses, then 200, and keeps every POST.
type Hook struct {
	Url   string
	Mu    sync.Mutex
	fail  []int
	Posts []notify.Event // every POST, answered or not
	Ok    []notify.Event // the ones answered 200
}

// from e2e_notify_test.go
func NewHook(t *testing.T, fail ...int) *Hook {
	t.Helper()
	h := &Hook{fail: fail}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var e notify.Event
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("webhook body %q: %v", body, err)
		}
		h.Mu.Lock()
		defer h.Mu.Unlock()
		h.Posts = append(h.Posts, e)
		if len(h.fail) > 0 {
			w.WriteHeader(h.fail[0])
			h.fail = h.fail[1:]
			return
		}
		h.Ok = append(h.Ok, e)
	}))
	t.Cleanup(srv.Close)
	h.Url = srv.URL + "/hook"
	return h
}

// from e2e_notify_test.go
// received returns the events answered 200 with this name (and batch).
func (h *Hook) Received(event, batch string) []notify.Event {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	var out []notify.Event
	for _, e := range h.Ok {
		if e.Event == event && (batch == "" || e.Batch == batch) {
			out = append(out, e)
		}
	}
	return out
}

// from e2e_notify_test.go
func (h *Hook) WaitFor(t *testing.T, event, batch string) notify.Event {
	t.Helper()
	var got []notify.Event
	testkit.Wait(t, event+" "+batch+" at the webhook", 30*time.Second, func() bool {
		got = h.Received(event, batch)
		return len(got) > 0
	})

	return got[0]
}

// from e2e_api_test.go
// APIKey is the API key planted in the daemon's environment; it must reach
// the stand-in's Authorization header and nowhere else.
const APIKey = "sk-test-PLANTED-4f3a9"

// from e2e_api_test.go
// APIStand starts an apistand on 127.0.0.1, closed at cleanup.
func APIStand(t *testing.T, o apistand.Options) *apistand.Server {
	t.Helper()
	s, err := apistand.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// from e2e_api_test.go
// APIModels is the models: section for the stand-in at url.
func APIModels(url string) string {
	return fmt.Sprintf(`models:
  - {name: api-plain, kind: api, baseURL: %[1]q, model: stand-in, apiKeyEnv: E2E_API_KEY, timeout: 10s}
  - {name: api-reasoner, kind: api, baseURL: %[1]q, model: stand-in, apiKeyEnv: E2E_API_KEY, needEmptyPrompt: true, timeout: 10s}
  - {name: api-quick, kind: api, baseURL: %[1]q, model: stand-in, apiKeyEnv: E2E_API_KEY, timeout: 300ms}
`, url)
}

// from e2e_api_test.go
// RequestTimes lists when the stand-in received requests with content.
func RequestTimes(s *apistand.Server, content string) []time.Time {
	var at []time.Time
	for _, q := range s.Requests() {
		if q.User == content {
			at = append(at, q.At)
		}
	}
	return at
}

// AddSites adds models (YAML list items) and sites (a block under
// sites:, as `site new` prints it) to the rig's config, as an operator
// pastes a proposed block unchanged.
func (r *Rig) AddSites(models, sites string) {
	r.T.Helper()
	b, err := os.ReadFile(r.CfgPath)
	if err != nil {
		r.T.Fatal(err)
	}
	text := strings.Replace(string(b), "models:\n", "models:\n"+models, 1) + sites
	if err := os.WriteFile(r.CfgPath, []byte(text), 0o600); err != nil {
		r.T.Fatal(err)
	}
}

// SiteNew runs `site new NAME ARGS...` and returns its proposed block
// (what follows "sites:"); the test fails when it exits non-zero or
// prints none.
func (r *Rig) SiteNew(name string, args ...string) (block, out, errOut string) {
	r.T.Helper()
	code, out, errOut := r.Run(append([]string{"site", "new", name}, args...)...)
	r.T.Logf("site new %s:\n%s%s", name, out, errOut)
	i := strings.Index(out, "\nsites:\n")
	if code != 0 || i < 0 {
		r.T.Fatalf("site new %s exited %d with no block", name, code)
	}
	return out[i+len("\nsites:\n"):], out, errOut
}
