package console

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/doors/liveview"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestLiveView_HoldForSignIn is holding a busy account for sign-in
// (issue 53), with the real parts: the account's Chromium on the sign-in
// stand-in, the operator's Chromium on the live page, and a task running
// on the account as the web lane runs one (the lane's lock taken, its
// runner inside the session: RunnerLock.TryLock, Run). The page offers
// the hold; pressing it pauses the account in the live view's name (the
// hold file, one audit line) without touching the task, and the page
// waits; when the task ends the view opens by itself, and closing it
// releases that pause (file gone, audit line). Then the same operator's
// live hold replaced by their own pause from the status page, and a hold
// asked for over a pause already there, both stay after the view.
func TestLiveView_HoldForSignIn(t *testing.T) {
	chromium := testkit.NeedChromium(t)
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) }) // after the stand-in's cleanup

	stand := testkit.NewSignInStandin(t)
	cfg := liveConfig(t, stand, chromium)
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	// The views' end hook as the console wires it, counted once it has
	// returned: its audit line and its release are both written then.
	var ends atomic.Int32
	h.live.SetHooks(liveview.Hooks{OnEnd: func(e liveview.Ended) { h.liveEnded(e); ends.Add(1) }, Alive: h.auth.alive})
	sess, _ := cfg.WebSession("a1")
	holdFile := filepath.Join(h.store.Layout.Accounts(), "a1"+taskfile.HeldExt)

	// The web lane holds the session's lock while it claims; a task
	// runs while its runner is inside (Run) until the attempt ends.
	lane := spool.OpenRunnerLock(sess.Lock)
	if err := lane.TryLock(cfg.Host); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lane.Unlock() }()
	runTask := func() (end func()) {
		t.Helper()
		enter, err := lane.Run()
		if err != nil {
			t.Fatal(err)
		}
		return enter
	}
	endTask := runTask()
	audit := func(action string) []spool.AuditEntry {
		es, err := h.store.Audit(time.Now(), func(e spool.AuditEntry) bool { return e.Action == action })
		if err != nil {
			t.Fatal(err)
		}
		return es
	}

	base := "http://" + h.Addr().String()
	ctx, run, stop := operatorBrowser(t, chromium, base)
	defer stop()
	look := func() testkit.LiveView { return testkit.LookLive(t, ctx) }

	// The busy account: the page says so and offers the hold.
	run("open the live page of the busy account", chromedp.Navigate(base+"/live/a1"), chromedp.WaitVisible(chromedp.CSS("#hold")))
	if st := look(); st.State != "busy" || !strings.Contains(st.Text, "a task is running on account a1") {
		t.Errorf("the busy page's status %q %q", st.State, st.Text)
	}
	run("hold the account", chromedp.Click(chromedp.CSS("#hold")))
	testkit.Wait(t, "the page to wait for the task's end", 30*time.Second, func() bool { return look().State == "waiting" })
	hd, ok := h.store.AccountHold("a1")
	if !ok || hd.Kind != taskfile.HoldPaused || !strings.Contains(hd.Reason, "王芳") || !strings.Contains(hd.Reason, "live view") || !strings.Contains(hd.Reason, "sign-in") {
		t.Fatalf("the hold after the button: %v %+v", ok, hd)
	}
	if es := audit("pause-account"); len(es) != 1 || es[0].User != "王芳" || es[0].Detail != "account a1: held for sign-in from the live view" || es[0].Remote == "" {
		t.Errorf("the hold's audit lines %+v", es)
	}
	if st := look(); !strings.Contains(st.Text, "waiting for its task to end") || !strings.Contains(st.Text, "status page") {
		t.Errorf("the waiting page says %q", st.Text)
	}
	if h.live.Get("a1") != nil {
		t.Fatal("a view opened while the task runs")
	}

	// The page asks again every 2 s while the task runs (two asks
	// refused), and its next ask after the task's end opens the view.
	asked := func() int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`+(document.getElementById('status').dataset.asked || 0)`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	testkit.Wait(t, "two asks to open refused while the task runs", 30*time.Second, func() bool { return asked() >= 2 })
	if h.live.Get("a1") != nil || look().State != "waiting" {
		t.Fatalf("while the task runs: the view %v, the page %+v", h.live.Get("a1"), look())
	}
	endTask()
	testkit.Wait(t, "the view to open by itself after the task", 90*time.Second, func() bool {
		st := look()
		return st.State == "open" && st.Seq > 0
	})
	if _, ok := h.store.AccountHold("a1"); !ok {
		t.Error("the hold ended when the view opened")
	}
	run("close the view", chromedp.Click(chromedp.CSS("#close")))
	testkit.Wait(t, "the view's end", 30*time.Second, func() bool { return ends.Load() == 1 })
	if _, err := os.Stat(holdFile); !os.IsNotExist(err) || len(audit("release")) != 1 {
		t.Fatalf("the live view's hold after the view: %v, %d release lines", err, len(audit("release")))
	}
	if es := audit("release"); es[0].User != "王芳" || es[0].Door != spool.DoorLive || !strings.Contains(es[0].Detail, "account a1: the live view's hold for sign-in") {
		t.Errorf("the release's audit line %+v", es[0])
	}
	stop() // the browser closed before what follows (stop is safe twice)

	// The same operator, over HTTP: a live hold they replace with their
	// own pause from the status page, and a hold asked for again (over
	// that pause) both leave the pause in place when the view ends.
	endTask = runTask()
	wang := newOperator(t, h)
	wang.login("王芳", "wang-secret")
	req, _ := http.NewRequest(http.MethodGet, wang.url("/live/a1"), nil)
	req.Header.Set("Accept-Language", "zh-CN,zh;q=0.9")
	if _, body := wang.do(req); !strings.Contains(body, liveZH.Hold) || !strings.Contains(body, liveZH.HoldNote) || strings.Contains(body, liveEN.Hold) {
		t.Errorf("the live page in Chinese has not the hold's words: %s", body)
	}
	open := func(hold bool) (*http.Response, string) {
		f := url.Values{"csrf": {wang.csrf}}
		if hold {
			f.Set("hold", "1")
		}
		return wang.post("/live/a1/open", f, nil)
	}
	if resp, body := open(true); resp.StatusCode != http.StatusConflict || resp.Header.Get("X-Live-Retry") != "busy" || resp.Header.Get("X-Live-Hold") != holdPlaced {
		t.Fatalf("hold while busy: %d %q %q %s", resp.StatusCode, resp.Header.Get("X-Live-Retry"), resp.Header.Get("X-Live-Hold"), body)
	}
	if resp, _ := open(true); resp.Header.Get("X-Live-Hold") != holdOurs {
		t.Errorf("hold asked again: %q, want %q", resp.Header.Get("X-Live-Hold"), holdOurs)
	}
	for _, do := range []string{"release", "pause-account"} {
		if resp, body := wang.post("/action", url.Values{"csrf": {wang.csrf}, "do": {do}, "account": {"a1"}, "back": {"/"}}, nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s from the status page: %d %s", do, resp.StatusCode, body)
		}
	}
	if resp, _ := open(true); resp.Header.Get("X-Live-Hold") != holdOther {
		t.Errorf("hold over the status page's pause: %q, want %q", resp.Header.Get("X-Live-Hold"), holdOther)
	}
	endTask()
	if resp, body := open(false); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("open after the task: %d %s", resp.StatusCode, body)
	}
	if resp, body := wang.post("/live/a1/close", url.Values{"csrf": {wang.csrf}}, nil); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("close: %d %s", resp.StatusCode, body)
	}
	testkit.Wait(t, "the second view's end", 30*time.Second, func() bool { return ends.Load() == 2 })
	if hd, ok := h.store.AccountHold("a1"); !ok || hd.By != "王芳 (console)" {
		t.Errorf("the status page's pause after the view: %v %+v", ok, hd)
	}
	if n := len(audit("release")); n != 2 { // the live view's one, and the status page's
		t.Errorf("%d release lines, want 2", n)
	}
}

// The hold's words in Chinese have no English word left (the page in
// Chinese is read in TestLiveView_HoldForSignIn).
func TestLiveView_HoldWordsChinese(t *testing.T) {
	word := regexp.MustCompile(`[A-Za-z][A-Za-z'-]*[A-Za-z]`)
	for name, s := range map[string]string{"Hold": liveZH.Hold, "HoldNote": liveZH.HoldNote, "Waiting": liveZH.Waiting, "HeldOther": liveZH.HeldOther,
		"Retrying": liveZH.Retrying, "LeftHeld": liveZH.LeftHeld, "NotHeld": liveZH.NotHeld, "Busy": liveZH.Busy} {
		if w := word.FindAllString(strings.ReplaceAll(s, "%s", ""), -1); len(w) > 0 || s == "" {
			t.Errorf("zh %s %q: English %q", name, s, w)
		}
	}
}
