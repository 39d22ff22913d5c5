package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
)

// liveConfig is a spool with two console users and one account, a1, of
// the sign-in stand-in's site.
func liveConfig(t *testing.T, stand *testkit.SignInStandin, chromium string) *config.Config {
	t.Helper()
	base := consoleWithUsers(t)
	cfg, err := config.ParseConfig([]byte(`
host: testhost
models:
  - {name: thinker, kind: web, site: stand}
sites:
` + stand.SignInSite("stand") + `
accounts:
  a1: {site: stand}
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Spool, cfg.Web.Profiles, cfg.HTTP, cfg.Console = base.Spool, base.Web.Profiles, base.HTTP, base.Console
	cfg.Web.Browser = chromium
	return cfg
}

// TestLiveView_SignIn is signing in from the page, end to end with two
// real headless Chromiums: the account's (the view's) on the sign-in
// stand-in, and the operator's, driven here on the console. The operator
// logs in, opens the live view, clicks the stand-in's "Sign in" button on
// the streamed image, types the code, and sees the view report signed
// in; meanwhile the session's lock is held, another operator is told who
// has the view, and a request without a login is refused. Closing the
// view lets the session go, the audit trail has the opening and the end,
// and the profile is now signed in (the site check passes).
func TestLiveView_SignIn(t *testing.T) {
	chromium := testkit.NeedChromium(t)
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) }) // after the stand-in's cleanup

	stand := testkit.NewSignInStandin(t)
	cfg := liveConfig(t, stand, chromium)
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	signedIn := make(chan string, 1)
	h.SetLiveHooks(func(acct string) { signedIn <- acct }, nil)
	sess, _ := cfg.WebSession("a1")

	// Without a login: the page, its frames and its input are refused.
	anon := newOperator(t, h)
	for _, p := range []string{"/live/a1", "/live/a1/frame"} {
		if resp, body := anon.get(p); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without a login: %d %s", p, resp.StatusCode, body)
		}
	}
	if resp, body := anon.post("/live/a1/open", url.Values{"csrf": {"x"}}, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("open without a login: %d %s", resp.StatusCode, body)
	}

	base := "http://" + h.Addr().String()
	ctx, run, stop := operatorBrowser(t, chromium, base)
	defer stop()
	run("open the live view from the status page", chromedp.Click(chromedp.CSS(`tr.session[data-account="a1"] a.live`)))
	look := func() testkit.LiveView { return testkit.LookLive(t, ctx) }
	var st testkit.LiveView
	opening := time.Now()
	testkit.Wait(t, "the first frame on the operator's page", 60*time.Second, func() bool {
		st = look()
		return st.Seq > 0 && st.W > 0 && st.State == "open"
	})
	t.Logf("first frame %s after the page opened (the account's browser launched), viewport %gx%g", time.Since(opening).Round(time.Millisecond), st.W, st.H)
	if st.State != "open" || !strings.Contains(st.Text, "click") {
		t.Errorf("status %q %q", st.State, st.Text)
	}

	// While open the session is taken: its lock, and the lane would idle.
	if err := spool.OpenRunnerLock(sess.Lock).TryLock(cfg.Host); !errors.Is(err, spool.ErrLockHeld) {
		t.Errorf("the session's lock while the view is open: %v, want held", err)
	}
	if who := spool.OpenRunnerLock(sess.Lock).Borrowed(); !strings.Contains(who, "王芳") {
		t.Errorf("borrowed by %q", who)
	}
	// A second operator is told who has it.
	li := newOperator(t, h)
	li.login("li", "li-secret")
	if resp, body := li.get("/live/a1"); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "in use by 王芳") {
		t.Errorf("second operator's page: %d %s", resp.StatusCode, body)
	}
	if resp, body := li.post("/live/a1/open", url.Values{"csrf": {li.csrf}}, nil); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "in use by 王芳") {
		t.Errorf("second operator's open: %d %s", resp.StatusCode, body)
	}
	if resp, body := li.post("/live/a1/input", url.Values{"csrf": {li.csrf}, "kind": {"text"}, "text": {"x"}}, nil); resp.StatusCode != http.StatusConflict {
		t.Errorf("second operator's input: %d %s", resp.StatusCode, body)
	}

	// Click the stand-in's button where the image shows it, then type
	// the code and Enter.
	x := st.Left + testkit.SignInX/st.W*st.Width
	y := st.Top + testkit.SignInY/st.H*st.Height
	seq := st.Seq
	run("click Sign in on the image", chromedp.MouseClickXY(x, y))
	testkit.Wait(t, "a new frame after the click (the code field shown)", 30*time.Second, func() bool { return look().Seq > seq })
	run("type the code", chromedp.KeyEvent(testkit.SignInCode+"\r"))
	testkit.Wait(t, "the view to report signed in", 60*time.Second, func() bool { return look().State == "signed-in" })
	select {
	case acct := <-signedIn:
		if acct != "a1" {
			t.Errorf("OnSignedIn(%q)", acct)
		}
	case <-time.After(30 * time.Second):
		t.Error("OnSignedIn not called")
	}
	if n := stand.SignIns(); n != 1 {
		t.Errorf("the stand-in took the code %d times", n)
	}

	t.Logf("signed in %s after the page opened; %d frames shown", time.Since(opening).Round(time.Millisecond), look().Seq)
	run("close the view", chromedp.Click(chromedp.CSS("#close")))
	testkit.Wait(t, "the view to end", 30*time.Second, func() bool { return h.live.Get("a1") == nil })
	lk := spool.OpenRunnerLock(sess.Lock)
	if err := lk.TryLock(cfg.Host); err != nil {
		t.Errorf("the session's lock after the view: %v", err)
	}
	_ = lk.Unlock()
	stop() // the browser closed before what follows (stop is safe twice)

	es, err := h.store.Audit(time.Now(), func(e spool.AuditEntry) bool { return strings.HasPrefix(e.Action, "live-") })
	if err != nil {
		t.Fatal(err)
	}
	acts := make([]string, len(es))
	for i, e := range es {
		acts[i] = e.User + " " + e.Action + " " + e.Detail
	}
	if len(es) != 2 || !strings.HasPrefix(acts[0], "王芳 live-open account a1") || !strings.HasPrefix(acts[1], "王芳 live-close account a1: closed") ||
		!strings.HasSuffix(acts[1], "signed in") || slices.ContainsFunc(es, func(e spool.AuditEntry) bool { return e.Remote == "" }) {
		t.Errorf("audit trail %q", acts)
	}

	// The profile is signed in: the site check passes on it.
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := browser.Check(cctx, cfg, "stand", browser.CheckOptions{Profile: sess.Profile})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.SignedIn {
		t.Errorf("after the live view the site check reads signed out: %+v", rep.Problems)
	}
}

// TestLiveView_EndsWithLogin: a live view ends when its operator logs out
// or their login expires, at once, not ~45 s later when their page has
// stopped asking for frames: the account's lock goes with the login, and
// the audit trail says why the view ended.
func TestLiveView_EndsWithLogin(t *testing.T) {
	chromium := testkit.NeedChromium(t)
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	stand := testkit.NewSignInStandin(t)
	for _, tc := range []struct {
		name    string
		session time.Duration
		logout  bool
		reason  string
	}{
		{name: "logs out", session: time.Hour, logout: true, reason: "logged out"},
		{name: "the login expires", session: 4 * time.Second, reason: "login ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := liveConfig(t, stand, chromium)
			cfg.Console.Session = config.Duration(tc.session)
			h := startTestHTTP(t, cfg, nil)
			defer h.Stop()
			sess, _ := cfg.WebSession("a1")
			o := newOperator(t, h)
			if r := o.login("王芳", "wang-secret"); r.StatusCode != http.StatusSeeOther {
				t.Fatalf("login: %d", r.StatusCode)
			}
			if resp, body := o.post("/live/a1/open", url.Values{"csrf": {o.csrf}}, nil); resp.StatusCode != http.StatusNoContent {
				t.Fatalf("open: %d %s", resp.StatusCode, body)
			}
			opened := time.Now()
			if tc.logout {
				if resp, _ := o.post("/logout", url.Values{"csrf": {o.csrf}}, nil); resp.StatusCode != http.StatusSeeOther {
					t.Fatalf("logout: %d", resp.StatusCode)
				}
			}
			// Well before liveview.DefaultGone (45 s), the view's end
			// without its page.
			testkit.Wait(t, "the view to end with the login", tc.session%time.Hour+20*time.Second, func() bool { return h.live.Get("a1") == nil })
			t.Logf("the view ended %s after it opened", time.Since(opened).Round(time.Millisecond))
			lk := spool.OpenRunnerLock(sess.Lock)
			if err := lk.TryLock(cfg.Host); err != nil {
				t.Errorf("the session's lock after the login ended: %v", err)
			}
			_ = lk.Unlock()
			// The end is written by the view's OnEnd hook, which runs as
			// the view goes: wait for its line, not for the view alone.
			var es []spool.AuditEntry
			testkit.Wait(t, "the live-close line", 10*time.Second, func() bool {
				var err error
				es, err = h.store.Audit(time.Now(), func(e spool.AuditEntry) bool { return e.Action == "live-close" })
				return err == nil && len(es) > 0
			})
			if len(es) != 1 || !strings.Contains(es[0].Detail, "account a1: "+tc.reason) {
				t.Errorf("audit trail %+v, want one live-close for %q", es, tc.reason)
			}
		})
	}
}

// operatorBrowser is 王芳's headless Chromium, logged in to the console at
// base (live tests' users), with run: its actions or the test's end, each
// within the browser's deadline; stop closes it (deferred by the test,
// before its goleak check).
func operatorBrowser(t *testing.T, chromium, base string) (ctx context.Context, run func(string, ...chromedp.Action[chromedp.Void]), stop func()) {
	t.Helper()
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), testkit.ChromiumOptions(t, chromium)...)
	bctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(bctx, 3*time.Minute) // deadlines, not pace: CI runs under load
	stop = func() { cancelT(); cancelB(); cancelA() }
	run = func(what string, acts ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, acts...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	run("log in", chromedp.Navigate(base+"/login"),
		chromedp.SetValue(chromedp.CSS("#user"), "王芳"), chromedp.SetValue(chromedp.CSS("#password"), "wang-secret"),
		chromedp.Click(chromedp.CSS("#login")), chromedp.WaitVisible(chromedp.CSS("#logout")))
	return ctx, run, stop
}
