package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/shirou/gopsutil/v4/process"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Timings of the browser lifecycle.
const (
	// closeGrace is how long a graceful Browser.close may take before the
	// whole tree is killed (the field report's 3 s).
	closeGrace = 3 * time.Second
	// launchTimeout bounds the start of the browser up to a usable tab.
	launchTimeout = 30 * time.Second
	// settleGone is how long Close waits for Chromium's helpers to follow
	// the main process out before it kills them as leftovers.
	settleGone = time.Second
)

// browserNames are looked up on PATH, in order, when web.browser is empty.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "msedge"}

// FindBrowser returns the browser to run: web.browser if set (a path or a
// name on PATH), else the first of chromium, chromium-browser,
// google-chrome, google-chrome-stable, chrome, msedge found on PATH.
func FindBrowser(cfg *config.Config) (string, error) {
	if b := cfg.Web.Browser; b != "" {
		p, err := exec.LookPath(b)
		if err != nil {
			return "", attempt.Errorf(taskfile.ClassEnvironment, "web.browser %q: %w", b, err)
		}
		return p, nil
	}
	for _, n := range browserNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", attempt.Errorf(taskfile.ClassEnvironment, "no browser found on PATH (tried %v); install Chromium or set web.browser", browserNames)
}

// closedNetworkFlags keep Chromium from calling home: no first-run UI, no
// component or safe-browsing updates, no sync, no QUIC, no metrics. On a
// closed network these would hang or spam the log; everywhere they are
// traffic the task did not ask for.
var closedNetworkFlags = []chromedp.ExecAllocatorOption{
	chromedp.NoFirstRun,
	chromedp.NoDefaultBrowserCheck,
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
	chromedp.Flag("disable-quic", true),
	chromedp.Flag("disable-default-apps", true),
	chromedp.Flag("disable-extensions", true),
	chromedp.Flag("disable-breakpad", true),
	chromedp.Flag("disable-client-side-phishing-detection", true),
	chromedp.Flag("disable-domain-reliability", true),
	chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,CertificateTransparencyComponentUpdater"),
	chromedp.Flag("no-pings", true),
	chromedp.Flag("metrics-recording-only", true),
	chromedp.Flag("safebrowsing-disable-auto-update", true),
	chromedp.Flag("password-store", "basic"),
	chromedp.Flag("use-mock-keychain", true),
	chromedp.Flag("disable-dev-shm-usage", true),
	// A page that streams its answer must keep running its timers.
	chromedp.Flag("disable-background-timer-throttling", true),
	chromedp.Flag("disable-backgrounding-occluded-windows", true),
	chromedp.Flag("disable-renderer-backgrounding", true),
	chromedp.Flag("disable-hang-monitor", true),
	chromedp.Flag("disable-popup-blocking", true),
}

// Browser is one running Chromium on our profile, started by Launch and
// ended by Close. Its tab context drives the page.
type Browser struct {
	ctx         context.Context // the tab; done when the browser is gone
	cancel      context.CancelFunc
	allocCancel context.CancelFunc
	pid         int
	profile     string
	log         *slog.Logger
	grace       time.Duration

	closeOnce sync.Once

	// A warm session's count of tasks and the end of its last one.
	tasks int
	used  time.Time
}

// PID is the browser's main process.
func (b *Browser) PID() int { return b.pid }

// Context is the tab's chromedp context; it ends when the browser is gone.
func (b *Browser) Context() context.Context { return b.ctx }

// Launch starts the browser on profile, headless or not, over the DevTools
// pipe (no debugging port), in its own process group, and returns once a
// tab answers. ctx bounds the start only: the browser lives until Close.
func Launch(ctx context.Context, cfg *config.Config, profile string, headless bool, log *slog.Logger) (*Browser, error) {
	path, err := FindBrowser(cfg)
	if err != nil {
		return nil, err
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.UserDataDir(profile)}
	opts = append(opts, closedNetworkFlags...)
	if headless {
		opts = append(opts, chromedp.Headless, chromedp.Flag("enable-automation", true))
	} else {
		opts = append(opts, chromedp.VisibleWindow)
	}
	if os.Geteuid() == 0 {
		// Chromium refuses to start as root with its sandbox on.
		opts = append(opts, chromedp.NoSandbox)
	}
	opts = append(opts, chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) { fsx.OwnGroup(cmd, true) }))
	px, err := proxyOf(cfg, profile)
	if err != nil {
		return nil, attempt.Errorf(taskfile.ClassEnvironment, "proxy: %w", err)
	}
	if px.Server != "" {
		opts = append(opts, proxyFlags(px)...)
	}

	// The browser's life is bound to a context of its own, not to the
	// task's: a cancel must close it through the close procedure, not by
	// a bare kill of the main process.
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	tabCtx, cancel := chromedp.NewContext(allocCtx)
	b := &Browser{ctx: tabCtx, cancel: cancel, allocCancel: allocCancel, profile: profile, log: log, grace: closeGrace}

	started := time.Now()
	errc := make(chan error, 1)
	go func() { errc <- chromedp.Do(tabCtx) }() // starts the browser and its tab
	gotDo := false
	select {
	case err = <-errc:
		gotDo = true
	case <-ctx.Done():
		err = context.Cause(ctx)
	case <-time.After(launchTimeout):
		err = fmt.Errorf("browser did not start within %s", launchTimeout)
	}
	if err != nil {
		b.abort(gotDo, errc)
		return nil, attempt.Errorf(taskfile.ClassEnvironment, "launch %s: %w", path, err)
	}
	if c := chromedp.FromContext(tabCtx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
		b.pid = c.Browser.Process().Pid
	}
	if px.User != "" {
		if err := answerProxyAuth(tabCtx, px); err != nil {
			b.Close()
			return nil, attempt.Errorf(taskfile.ClassEnvironment, "launch %s: proxy authentication: %w", path, err)
		}
	}
	log.Info("browser: launched", "pid", b.pid, "path", path, "headless", headless, "profile", profile, "proxy", px.Server, "proxyAuth", px.User != "", "took", time.Since(started).Round(time.Millisecond))
	return b, nil
}

// abort ends a launch that failed. chromedp's own cancel waits forever
// for a browser that was never allocated (no display, a start that was
// cut short), so the allocator is canceled first: that kills a half-started
// process and lets the start return; then the normal close runs if a
// browser exists, else only the sweep for leftovers.
func (b *Browser) abort(gotDo bool, errc <-chan error) {
	b.allocCancel()
	if !gotDo {
		<-errc
	}
	c := chromedp.FromContext(b.ctx)
	if c != nil && c.Browser != nil {
		if p := c.Browser.Process(); p != nil {
			b.pid = p.Pid
		}
		b.Close()
		return
	}
	b.closeOnce.Do(func() {
		b.sweep(time.Now(), "start failed")
	})
}

// Probe is the CDP round-trip the lane calls each heartbeat period:
// Browser.getVersion must come back within timeout. A browser that hangs
// (or is stopped) fails it, so its task goes stale.
func (b *Browser) Probe(ctx context.Context, timeout time.Duration) error {
	pctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	if _, err := chromedp.CallBrowser(pctx, browser.GetVersion, cdp.Empty{}); err != nil {
		return fmt.Errorf("browser pid %d did not answer a CDP round-trip: %w", b.pid, err)
	}
	return nil
}

// Close ends the browser: Browser.close through CDP; if the process has
// not exited within 3 s, its whole tree is killed. Then it verifies that no
// process on our profile remains, killing any that does, and logs the
// outcome. Safe to call twice and on a browser that already died.
func (b *Browser) Close() {
	b.closeOnce.Do(b.close)
}

func (b *Browser) close() {
	start := time.Now()
	how := "closed"
	done := make(chan struct{})
	go func() {
		defer close(done)
		cctx, cancel := context.WithTimeout(b.ctx, b.grace)
		defer cancel()
		_ = chromedp.Cancel(cctx) // graceful Browser.close, then waits for the exit
	}()
	var root *process.Process
	if b.pid > 0 {
		root, _ = process.NewProcess(int32(b.pid))
	}
	select {
	case <-done:
	case <-time.After(b.grace):
	}
	// Cancel gives up without a kill when Browser.close gets no answer (a
	// hung or stopped browser), and it never ends the helpers: past the
	// grace, or after a failed close, end the whole tree ourselves.
	if b.pid > 0 && pidAlive(int32(b.pid)) {
		how = "killed after the close grace"
		b.log.Warn("browser: did not exit in time; killing its tree", "pid", b.pid, "grace", b.grace)
		fsx.KillGroup(b.pid)
		if root != nil {
			killTree(root)
		}
	}
	b.cancel()
	<-done
	b.allocCancel() // waits for the allocator to reap the process
	b.sweep(start, how)
}

// sweep verifies that no process on our profile remains after a close,
// kills any that does, and logs the outcome.
func (b *Browser) sweep(start time.Time, how string) {
	// Chromium's helpers leave just after the main process; give them a
	// moment, then anything still on our profile is a leftover.
	left := b.remaining(settleGone)
	if len(left) > 0 {
		var pids []int32
		for _, p := range left {
			b.log.Warn("browser: process left on our profile after close; killing", "process", describe(p))
			pids = append(pids, killTree(p)...)
		}
		if still := waitGone(pids, killWait); len(still) > 0 {
			b.log.Error("browser: processes survived the kill", "pids", still)
			return
		}
	}
	b.log.Info("browser: "+how+"; no process of ours remains", "pid", b.pid, "took", time.Since(start).Round(time.Millisecond))
}

// remaining polls up to d for the processes on our profile to be gone and
// returns those still there.
func (b *Browser) remaining(d time.Duration) []*process.Process {
	deadline := time.Now().Add(d)
	for {
		ps, err := profileProcs(b.profile)
		if err != nil {
			b.log.Error("browser: cannot list processes to verify the close", "err", err)
			return nil
		}
		if len(ps) == 0 || time.Now().After(deadline) {
			return ps
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exited reports whether the browser's main process has gone.
func (b *Browser) exited() bool {
	return b.pid > 0 && !pidAlive(int32(b.pid))
}

// errBrowserGone marks a browser that died under the task.
var errBrowserGone = errors.New("browser exited")

// An account's proxy (accounts.NAME.proxy) applies to every browser on
// that account's profile: the task's, `login`'s, `check`'s. It is found by
// the profile, so no caller can launch the account's browser without it.

// proxyOf returns the proxy of the account whose session runs on profile,
// if it has one.
func proxyOf(cfg *config.Config, profile string) (config.Proxy, error) {
	for _, s := range cfg.WebSessions() {
		if !samePath(s.Profile, profile) {
			continue
		}
		if raw := cfg.Accounts[s.Account].Proxy; raw != "" {
			return config.ParseProxy(raw) // checked at start; an error here is a config changed under us
		}
	}
	return config.Proxy{}, nil
}

// proxyFlags are Chromium's flags for p: the server without credentials,
// and "<-loopback>", which takes back Chromium's implicit bypass of
// localhost and 127.0.0.1 so that every request of the account, to any
// host, goes through its proxy (a test's loopback proxy sees it, and a
// site reached through an SSH tunnel on localhost goes out the same way).
func proxyFlags(p config.Proxy) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ProxyServer(p.Server),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
	}
}

// answerProxyAuth makes the tab answer its proxy's 407 with the account's
// credentials (CDP Fetch.authRequired → Fetch.continueWithAuth). Fetch
// pauses every request of the tab while it is on; each goes on at once.
// A challenge from a web server (not the proxy) gets the browser's
// default, and a second challenge for one request (wrong credentials) is
// canceled instead of answered again, so a bad password fails the page
// load instead of looping. The credentials go only into CDP calls.
func answerProxyAuth(tab context.Context, p config.Proxy) error {
	var mu sync.Mutex
	tried := map[fetch.RequestID]bool{}
	// CDP calls never run on chromedp's event goroutine (see chromedp.Listen).
	cont := func(id fetch.RequestID) {
		go func() { _, _ = chromedp.Call(tab, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id}) }()
	}
	auth := func(id fetch.RequestID, r *fetch.AuthChallengeResponse) {
		go func() {
			_, _ = chromedp.Call(tab, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: id, AuthChallengeResponse: r})
		}()
	}
	err := chromedp.Listen(tab, func(ev any) {
		switch e := ev.(type) {
		case *fetch.EventRequestPaused:
			cont(e.RequestID)
		case *fetch.EventAuthRequired:
			resp := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseDefault}
			mu.Lock()
			again := tried[e.RequestID]
			tried[e.RequestID] = true
			mu.Unlock()
			switch {
			case e.AuthChallenge == nil || e.AuthChallenge.Source != fetch.AuthChallengeSourceProxy:
			case again:
				resp.Response = fetch.AuthChallengeResponseResponseCancelAuth
			default:
				resp = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials, Username: p.User, Password: p.Password}
			}
			auth(e.RequestID, resp)
		}
	})
	if err != nil {
		return err
	}
	on := true
	_, err = chromedp.Call(tab, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &on})
	return err
}
