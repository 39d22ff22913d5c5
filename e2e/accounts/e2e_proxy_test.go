//go:build linux

package accounts

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// proxyMark is the header the test's forward proxy adds to what it
// forwards, so the tap in front of the stand-in tells proxied requests
// from direct ones.
const proxyMark = "X-Test-Forward-Proxy"

// forwardProxy is a tiny HTTP forward proxy on 127.0.0.1 that wants the
// credentials user:pass (407 otherwise) and marks what it forwards.
func forwardProxy(t *testing.T, user, pass string) (srv *httptest.Server, denied func() int) {
	var mu sync.Mutex
	n407 := 0
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL = r.In.URL // an absolute-form request: forward it as asked
			r.Out.Header.Set(proxyMark, "1")
		},
		Transport:     &http.Transport{Proxy: nil},
		FlushInterval: -1, // the answer streams
	}
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Proxy-Authorization") != want {
			mu.Lock()
			n407++
			mu.Unlock()
			w.Header().Set("Proxy-Authenticate", `Basic realm="test"`)
			w.WriteHeader(http.StatusProxyAuthRequired)
			return
		}
		if !r.URL.IsAbs() {
			http.Error(w, "a forward proxy takes absolute URLs", http.StatusBadRequest)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return n407 }
}

// tap sits in front of the stand-in and records, by signed-in user, how
// many requests came through the forward proxy and how many directly; it
// learns each session cookie's user from the stand-in's login responses.
type tap struct {
	mu      sync.Mutex
	user    map[string]string // session cookie -> user
	proxied map[string]int
	direct  map[string]int
}

func newTap(t *testing.T, stand *chatstand.Server) (*tap, *httptest.Server) {
	tp := &tap{user: map[string]string{}, proxied: map[string]int{}, direct: map[string]int{}}
	target, _ := url.Parse(stand.URL())
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	rp.ModifyResponse = func(resp *http.Response) error {
		if u := resp.Request.URL.Query().Get("user"); strings.HasSuffix(resp.Request.URL.Path, "/login") && u != "" {
			for _, c := range resp.Cookies() {
				if c.Name == chatstand.SessionCookie && c.Value != "" {
					tp.mu.Lock()
					tp.user[c.Value] = u
					tp.mu.Unlock()
				}
			}
		}
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := "(none)"
		tp.mu.Lock()
		if c, err := r.Cookie(chatstand.SessionCookie); err == nil {
			if u, ok := tp.user[c.Value]; ok {
				who = u
			}
		}
		if r.Header.Get(proxyMark) != "" {
			tp.proxied[who]++
		} else {
			tp.direct[who]++
		}
		tp.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return tp, srv
}

func (tp *tap) counts() (proxied, direct map[string]int) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return maps.Clone(tp.proxied), maps.Clone(tp.direct)
}

// Issue 42: an account's proxy (accounts.NAME.proxy, with credentials)
// carries all of that account's traffic, sign-in included, and none of
// the other account's, through `spoolgate run` with two accounts on one
// site; the credentials appear in no log, status or task file; and the
// daemon's stop leaves no browser behind.
func TestE2E_Web_ProxyPerAccount(t *testing.T) {
	t.Parallel()
	testkit.NeedChromium(t)
	stand, err := chatstand.Start(chatstand.Options{Scale: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stand.Close() })
	tp, front := newTap(t, stand)
	const secret = "s3cret-pw"
	px, denied := forwardProxy(t, "acct1", secret)
	proxyURL := "http://acct1:" + secret + "@" + strings.TrimPrefix(px.URL, "http://")
	site := front.URL + "/"
	tail := fmt.Sprintf(`models:
  - {name: web-a1, kind: web, site: standin, account: a1, needEmptyPrompt: true}
  - {name: web-a2, kind: web, site: standin, account: a2, needEmptyPrompt: true}
sites:
%saccounts:
  a1: {site: standin, proxy: %q}
  a2: {site: standin}
`, testkit.StandinSite(site), proxyURL)
	r := rig.New(t, rig.Opts{Tail: tail, Heartbeat: 500 * time.Millisecond, StaleAfter: 2 * time.Second})
	for _, s := range r.Cfg.WebSessions() {
		t.Cleanup(func() { testkit.NoProcs(t, s.Profile) })
		rig.LoginAs(t, r.Cfg, s.Profile, site, s.Account) // a1's sign-in goes through its proxy too
	}
	d := r.Start()
	var tasks []rig.Task
	for i := range 3 {
		for _, a := range []string{"a1", "a2"} {
			tasks = append(tasks, rig.Task{ID: fmt.Sprintf("%s-%d", a, i), Model: "web-" + a, Content: fmt.Sprintf("[[duration=20s]] proxy task %d of %s", i, a)})
		}
	}
	r.Submit(tasks...)
	for _, tk := range tasks {
		got := r.Final(taskfile.KindWeb, tk.ID, 2*time.Minute)
		if got.State != taskfile.StateSuccess || got.Result != chatstand.AnswerFor(tk.Content) || got.Account != tk.Model[len("web-"):] {
			t.Errorf("%s: %s on %s %q (error %q)", tk.ID, got.State, got.Account, got.Result, got.Error)
		}
	}
	status := r.CLI("status")
	d.Stop()
	for _, s := range r.Cfg.WebSessions() {
		if left := testkit.Pgrep(t, s.Profile); len(left) > 0 {
			t.Errorf("the daemon's stop returned with processes on %s's profile: %v", s.Account, left)
		}
	}
	proxied, direct := tp.counts()
	t.Logf("through the proxy: %v; direct: %v; 407s answered: %d; generations a1 %d a2 %d", proxied, direct, denied(), stand.GenerationsBy("a1"), stand.GenerationsBy("a2"))
	if proxied["a1"] == 0 || direct["a1"] != 0 {
		t.Errorf("a1's requests: %d through its proxy, %d direct; want all through it", proxied["a1"], direct["a1"])
	}
	if direct["a2"] == 0 || proxied["a2"] != 0 {
		t.Errorf("a2's requests: %d direct, %d through a1's proxy; want none through it", direct["a2"], proxied["a2"])
	}
	// At least: a stream relayed by httputil.ReverseProxy (the tap, the
	// proxy) now and then ends as the page's "network error" under load;
	// its retry runs on the same account, through the same path.
	if stand.GenerationsBy("a1") < 3 || stand.GenerationsBy("a2") < 3 {
		t.Errorf("generations a1 %d a2 %d; want 3 each at least", stand.GenerationsBy("a1"), stand.GenerationsBy("a2"))
	}
	if denied() == 0 {
		t.Error("the proxy never asked for credentials: the 407 path was not exercised")
	}
	if strings.Contains(status, secret) || strings.Contains(d.LogText(), secret) {
		t.Error("the proxy's password shows in status or the daemon's log")
	}
	if hits, n := rig.FilesContaining(t, r.Dir, secret); len(hits) > 1 || (len(hits) == 1 && hits[0] != r.CfgPath) {
		t.Errorf("the proxy's password is in files other than the config (%d read): %v", n, hits)
	}
	if !strings.Contains(d.LogText(), "browser: warm; reused") {
		t.Error("no task reused a warm browser")
	}
}
