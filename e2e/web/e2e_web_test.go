//go:build linux

package web

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 5's acceptance through `spoolgate run` with a real headless
// Chromium on a profile signed in to examples/chatstand.

// e2eWebModels is the models: and sites: sections for the stand-in at url,
// the same selectors as examples/site-standin.yaml.
func e2eWebModels(url string) string {
	return fmt.Sprintf(`models:
  - {name: chat-web, kind: web, site: standin, account: demo, needEmptyPrompt: true}
  - {name: chat-web-prompt, kind: web, site: standin, account: demo}
sites:
%saccounts:
  demo: {disabled: false}
`, testkit.StandinSite(url))
}

// e2eWeb is a web test's rig, stand-in and signed-in profile.
type e2eWeb struct {
	*rig.Rig
	stand   *chatstand.Server
	profile string
}

// e2eNewWeb starts a chat stand-in (durations × scale) whose page
// pre-fills instructions, with the profile signed in (the stand-in's
// SignedIn: no browser is launched only to sign in), and writes the
// config.
// It needs Chromium: without one it skips, or fails under CI=true.
func e2eNewWeb(t *testing.T, o rig.Opts, scale float64, instructions string) *e2eWeb {
	t.Helper()
	testkit.NeedChromium(t)
	stand, err := chatstand.Start(chatstand.Options{Scale: scale, Instructions: instructions, SignedIn: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stand.Close() })
	o.Tail = e2eWebModels(stand.URL())
	// The web heartbeat is a CDP round-trip bounded by half the period:
	// 500 ms gives it 250 ms, and staleAfter 2 s needs four misses in a
	// row, so a healthy browser on a loaded machine is not taken for hung.
	if o.Heartbeat == 0 {
		o.Heartbeat = 500 * time.Millisecond
	}
	if o.StaleAfter == 0 {
		o.StaleAfter = 2 * time.Second
	}
	w := &e2eWeb{Rig: rig.New(t, o), stand: stand}
	w.profile = browser.ProfileDir(w.Cfg)
	// Registered before the daemon's cleanup, so it runs after the daemon
	// is gone (cleanups run last-in first-out): then nothing may remain.
	t.Cleanup(func() { testkit.NoProcs(t, w.profile) })
	return w
}

// login signs the profile in again as a person would (`spoolgate login`):
// a browser on the profile opens the stand-in's /login?user=demo, which
// sets a persistent cookie; the browser is closed before the daemon runs.
func (w *e2eWeb) login(t *testing.T) {
	t.Helper()
	if err := os.MkdirAll(w.profile, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := browser.Launch(context.Background(), w.Cfg, w.profile, true, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(b.Context(), 15*time.Second)
	err = chromedp.Do(ctx, chromedp.Navigate(w.stand.URL()+"login?user=demo"))
	cancel()
	b.Close()
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	testkit.NoProcs(t, w.profile)
}

// browserPID waits until the task runs with an answer streaming and its
// running file names the browser, and returns that pid.
func (w *e2eWeb) browserPID(id string) int {
	w.T.Helper()
	testkit.Wait(w.T, "the answer of "+id+" to stream", 20*time.Second, func() bool { return w.stand.Active() == 1 })
	t := w.Running(taskfile.KindWeb, id, 10*time.Second, func(t *taskfile.Task) bool { return t.BrowserPID != 0 })
	cmd, err := os.ReadFile("/proc/" + strconv.Itoa(t.BrowserPID) + "/cmdline")
	if err != nil || !strings.Contains(string(cmd), w.profile) {
		w.T.Fatalf("browserPid %d of the running file is not a browser on our profile (%v): %q", t.BrowserPID, err, cmd)
	}
	return t.BrowserPID
}

// Ten web tasks through the daemon: all succeed with the stand-in's
// answers, one generation at a time, and needEmptyPrompt sends no system
// prompt (not even the page's pre-filled instructions).
func TestE2E_Web_TenTasks(t *testing.T) {
	t.Parallel()
	const scale = 0.01
	w := e2eNewWeb(t, rig.Opts{}, scale, "Default instructions: always answer in verse.")
	d := w.Start()
	var tasks []rig.Task
	var answerTime time.Duration
	for i := range 10 {
		model := "chat-web"
		if i%2 == 1 {
			model = "chat-web-prompt"
		}
		dur := time.Duration(20+2*i) * time.Second
		answerTime += time.Duration(float64(dur) * scale)
		tasks = append(tasks, rig.Task{ID: fmt.Sprintf("w%02d", i), Model: model, Prompt: "Be brief.",
			Content: fmt.Sprintf("[[duration=%s]] web task number %d", dur, i), Output: fmt.Sprintf("web/w%02d.txt", i)})
	}
	start := time.Now()
	w.Submit(tasks...)
	var inTask time.Duration
	pids := map[int]bool{}
	for _, tk := range tasks {
		got := w.Final(taskfile.KindWeb, tk.ID, 60*time.Second)
		want := chatstand.AnswerFor(tk.Content)
		if got.State != taskfile.StateSuccess || got.Attempt != 1 || got.Result != want {
			t.Errorf("%s: state %s attempt %d result %q error %q; want success at attempt 1 with %q", tk.ID, got.State, got.Attempt, got.Result, got.Error, want)
		}
		if got.BrowserPID == 0 {
			t.Errorf("%s: no browserPid recorded", tk.ID)
		}
		pids[got.BrowserPID] = true
		inTask += got.FinishedAt.Sub(got.StartedAt)
	}
	wall := time.Since(start)
	d.Stop()
	testkit.NoProcs(t, w.profile)

	if g, m, c := w.stand.Generations(), w.stand.MaxConcurrent(), w.stand.Collisions(); g != 10 || m != 1 || c != 0 {
		t.Errorf("stand-in saw %d generations, at most %d at once, %d collisions; want 10, 1, 0", g, m, c)
	}
	byContent := map[string]rig.Task{}
	for _, tk := range tasks {
		byContent[tk.Content] = tk
	}
	for _, m := range w.stand.Received() {
		tk, ok := byContent[m.Content]
		if !ok {
			t.Errorf("stand-in received unexpected content %q", m.Content)
			continue
		}
		want := "Be brief."
		if tk.Model == "chat-web" {
			want = "" // needEmptyPrompt: neither the task's prompt nor the page's default
		}
		if m.System != want || m.Refused != "" {
			t.Errorf("%s (%s): stand-in received system %q (refused %q), want %q", tk.ID, tk.Model, m.System, m.Refused, want)
		}
	}
	log := w.TaskLog(taskfile.KindWeb, "w03")
	if os.Getenv("E2E_DUMP") != "" {
		t.Logf("w03 log:\n%s", log)
	}
	// The one session keeps its browser warm between tasks (web.warm):
	// each launch, after its self-check, is in the log of the task that
	// needed it, and every task's browser was one of those launched.
	launches := 0
	for _, tk := range tasks {
		tl := w.TaskLog(taskfile.KindWeb, tk.ID)
		if n := strings.Count(tl, "browser: launched"); n > 0 {
			launches += n
			if !strings.Contains(tl, "self-check: clean") {
				t.Errorf("task log of %s launches without the self-check:\n%s", tk.ID, tl)
			}
		} else if !strings.Contains(tl, "browser: warm; reused") {
			t.Errorf("task log of %s neither launches nor reuses a warm browser:\n%s", tk.ID, tl)
		}
	}
	if launches != len(pids) || launches >= len(tasks) {
		t.Errorf("%d launches for %d tasks on %d browsers: want fewer launches than tasks, one per browser", launches, len(tasks), len(pids))
	}
	if !strings.Contains(log, "logged-in check") {
		t.Errorf("task log of w03 lacks the page's logged-in check:\n%s", log)
	}
	t.Logf("10 web tasks through the daemon, %d browser launch(es): wall %s from submit to last final, %s per task; in-attempt %s per task of which the answer streams %s: overhead %s per task (launch or warm, page, quiet period, close)", launches,
		wall.Round(time.Millisecond), (wall / 10).Round(time.Millisecond), (inTask / 10).Round(time.Millisecond),
		(answerTime / 10).Round(time.Millisecond), ((inTask - answerTime) / 10).Round(time.Millisecond))
}

// Chromium SIGKILLed mid-answer: that attempt fails transient, nothing is
// left on the profile, and the retry succeeds.
func TestE2E_Web_BrowserKilled(t *testing.T) {
	t.Parallel()
	w := e2eNewWeb(t, rig.Opts{}, 0.01, "")
	d := w.Start()
	content := "[[duration=150s]] survive a crash"
	w.Submit(rig.Task{ID: "killed", Model: "chat-web", Content: content})
	pid := w.browserPID("killed")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	got := w.Final(taskfile.KindWeb, "killed", 30*time.Second)
	if got.State != taskfile.StateSuccess || got.Attempt != 2 || got.Result != chatstand.AnswerFor(content) {
		t.Errorf("state %s attempt %d result %q error %q; want success at attempt 2", got.State, got.Attempt, got.Result, got.Error)
	}
	if got.BrowserPID == pid {
		t.Errorf("attempt 2 recorded the killed browser's pid %d", pid)
	}
	log := w.TaskLog(taskfile.KindWeb, "killed")
	if !strings.Contains(log, "errorClass=transient") || !strings.Contains(log, "browser exited") {
		t.Errorf("task log does not show attempt 1 failing transient with the browser gone:\n%s", log)
	}
	closedEach(t, w.Rig, "killed", 2)
	d.Stop()
	testkit.NoProcs(t, w.profile)
}

// A page that never finishes: every attempt ends at web.taskTimeout as
// transient, is retried, and after the last retry the task is failed.
func TestE2E_Web_Hang(t *testing.T) {
	// Long enough that the launch (about 1 s, several on a loaded
	// machine) fits well inside it: the page must be what hangs. 4 s was
	// not (CI, stop 36: the second attempt never reached the page).
	const timeout = 8 * time.Second
	w := e2eNewWeb(t, rig.Opts{TaskTimeout: timeout, MaxRetries: 1}, 0.01, "")
	d := w.Start()
	start := time.Now()
	w.Submit(rig.Task{ID: "hang", Model: "chat-web", Content: "[[hang]] never ends"})
	got := w.Final(taskfile.KindWeb, "hang", 60*time.Second)
	took := time.Since(start)
	if got.State != taskfile.StateFailed || got.ErrorClass != taskfile.ClassTransient || got.Attempt != 2 || !strings.Contains(got.Error, "timed out") {
		t.Errorf("state %s class %s attempt %d error %q; want failed transient at attempt 2, timed out", got.State, got.ErrorClass, got.Attempt, got.Error)
	}
	if took < 2*timeout {
		t.Errorf("two attempts took %s, less than two taskTimeouts", took)
	}
	log := w.TaskLog(taskfile.KindWeb, "hang")
	if n := strings.Count(log, "attempt failed: retry scheduled"); n != 1 || !strings.Contains(log, "errorClass=transient") {
		t.Errorf("task log shows %d scheduled retries, want 1 (transient):\n%s", n, log)
	}
	closedEach(t, w.Rig, "hang", 2)
	if n := w.stand.Generations(); n != 2 {
		t.Errorf("stand-in saw %d generations, want 2", n)
	}
	testkit.NoProcs(t, w.profile)
	d.Stop()
	t.Logf("hang: 2 attempts at taskTimeout %s ended failed after %s", timeout, took.Round(time.Millisecond))
}

// A browser that stops answering (SIGSTOP): the heartbeat probe fails, the
// stale rule ends the attempt after staleAfter, the stopped browser's tree
// is killed, and the retry succeeds.
func TestE2E_Web_StoppedBrowser(t *testing.T) {
	w := e2eNewWeb(t, rig.Opts{MaxRetries: 1}, 0.01, "")
	d := w.Start()
	content := "[[duration=150s]] outlive a frozen browser"
	w.Submit(rig.Task{ID: "frozen", Model: "chat-web", Content: content})
	pid := w.browserPID("frozen")
	t.Cleanup(func() {
		// Only if the daemon failed to: a stopped process of this test's
		// daemon, still on our profile, is woken and ended.
		if cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && strings.Contains(string(cmd), w.profile) {
			_ = syscall.Kill(pid, syscall.SIGCONT)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	stopped := time.Now()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The heartbeat stops: attempt 1's heartbeatAt no longer moves once
	// the browser is stopped, until the stale rule ends the attempt.
	var lastHB time.Time
	testkit.WaitFS(t, "attempt 1 to end", 20*time.Second, []string{w.L.Lane(taskfile.KindWeb, taskfile.DirRunning)}, func() bool {
		rt := w.Read(taskfile.KindWeb, taskfile.DirRunning, "frozen")
		if rt == nil || rt.Attempt != 1 {
			return rt != nil || w.L.Locate(taskfile.KindWeb, "frozen") != taskfile.DirRunning
		}
		if rt.HeartbeatAt.After(lastHB) {
			lastHB = rt.HeartbeatAt
		}
		return false
	})
	staleAt := time.Now()
	got := w.Final(taskfile.KindWeb, "frozen", 30*time.Second)
	if got.State != taskfile.StateSuccess || got.Attempt != 2 || got.Result != chatstand.AnswerFor(content) {
		t.Errorf("state %s attempt %d result %q error %q; want success at attempt 2", got.State, got.Attempt, got.Result, got.Error)
	}
	log := w.TaskLog(taskfile.KindWeb, "frozen")
	for _, s := range []string{"liveness probe failed", "errorClass=stale", "killing its tree"} {
		if !strings.Contains(log, s) {
			t.Errorf("task log lacks %q:\n%s", s, log)
		}
	}
	closedEach(t, w.Rig, "frozen", 2)
	// One beat may already have been under way when the stop landed (a
	// period, 500 ms); the attempt then lasts 5 s more without one.
	if lastHB.After(stopped.Add(time.Second)) {
		t.Errorf("heartbeatAt %s moved on after the browser was stopped at %s", lastHB.Format(time.RFC3339Nano), stopped.Format(time.RFC3339Nano))
	}
	// staleAfter is 2 s; the close of a stopped browser waits its 3 s
	// grace before the kill.
	if took := staleAt.Sub(stopped); took < 2*time.Second || took > 10*time.Second {
		t.Errorf("attempt 1 ended %s after the stop; want staleAfter (2 s) plus the close grace", took)
	}
	t.Logf("stopped browser: attempt 1 ended %s after SIGSTOP (staleAfter 2s + close grace 3s)", staleAt.Sub(stopped).Round(time.Millisecond))
	// The stopped browser is gone (attempt 2's may stay warm for the next
	// task); once the daemon has stopped, nothing is left on the profile.
	if !testkit.Until(5*time.Second, func() bool { return !slices.Contains(testkit.Pgrep(t, w.profile), strconv.Itoa(pid)) }) {
		t.Errorf("the stopped browser %d is still there", pid)
	}
	d.Stop()
	testkit.NoProcs(t, w.profile)
}

// Cancel mid-answer ends canceled with no process left; then, with the
// session signed out, a task holds the account instead of failing (back
// to pending, its attempt given back, a screenshot of the page) until
// the profile is signed in again and the hold released.
func TestE2E_Web_CancelAndSignedOut(t *testing.T) {
	t.Parallel()
	w := e2eNewWeb(t, rig.Opts{}, 0.01, "")
	d := w.Start()
	w.Submit(rig.Task{ID: "cancel-me", Model: "chat-web", Content: "[[duration=1000s]] long answer"})
	w.browserPID("cancel-me")
	asked := time.Now()
	if out := w.CLI("cancel", "cancel-me"); !strings.Contains(out, "cancel requested") {
		t.Fatalf("cancel printed %q", out)
	}
	got := w.Final(taskfile.KindWeb, "cancel-me", 20*time.Second)
	if got.State != taskfile.StateCanceled || got.ErrorClass != taskfile.ClassCanceled || got.Attempt != 1 || got.Result != "" {
		t.Errorf("state %s class %s attempt %d result %q error %q; want canceled at attempt 1, no result", got.State, got.ErrorClass, got.Attempt, got.Result, got.Error)
	}
	t.Logf("cancel to canceled file: %s", time.Since(asked).Round(time.Millisecond))
	testkit.NoProcs(t, w.profile)
	testkit.Wait(t, "the stand-in to see the generation end", 5*time.Second, func() bool { return w.stand.Active() == 0 })

	w.stand.LogoutAll()
	gens := w.stand.Generations()
	w.Submit(rig.Task{ID: "signed-out", Model: "chat-web", Content: "hello"})
	// The signed-out page holds the account: the task goes back to
	// pending with its attempt given back, never failed.
	st := w.Store()
	var h taskfile.Hold
	testkit.WaitFS(t, "the signed-out page to hold account demo", 20*time.Second, []string{w.L.Accounts(), w.L.Lane(taskfile.KindWeb, taskfile.DirPending)}, func() bool {
		var ok bool
		h, ok = st.AccountHold("demo")
		tk := w.Read(taskfile.KindWeb, taskfile.DirPending, "signed-out")
		return ok && tk != nil && tk.Attempt == 0
	})
	if h.Kind != taskfile.HoldSignedOut || h.Screenshot != "web/logs/signed-out.1.png" || h.Task != "signed-out" {
		t.Errorf("hold %+v: want signedOut with the page's screenshot", h)
	}
	if fi, err := os.Stat(filepath.Join(w.L.Root, h.Screenshot)); err != nil || fi.Size() == 0 {
		t.Errorf("screenshot: %v", err)
	}
	if tk := w.Read(taskfile.KindWeb, taskfile.DirPending, "signed-out"); tk == nil || !strings.Contains(tk.Error, "account signed out") || !strings.Contains(tk.Error, "spoolgate login standin") {
		t.Errorf("pending task %+v: want its error to say the account is signed out", tk)
	}
	if out := w.CLI("status"); !strings.Contains(out, "account demo is signed out") || !strings.Contains(out, "screenshot web/logs/signed-out.1.png") {
		t.Errorf("status does not show the hold:\n%s", out)
	}
	if w.stand.Generations() != gens {
		t.Errorf("a generation started on the signed-out page")
	}
	// Signed in again and released: the next task checks the page and runs.
	w.login(t)
	if out := w.CLI("resume", "--account", "demo"); !strings.Contains(out, "hold ended by hand (it was signed out") {
		t.Errorf("resume printed %q", out)
	}
	got = w.Final(taskfile.KindWeb, "signed-out", 30*time.Second)
	if got.State != taskfile.StateSuccess || got.Attempt != 1 {
		t.Errorf("after the release: state %s attempt %d error %q; want success at attempt 1", got.State, got.Attempt, got.Error)
	}
	d.Stop()
	testkit.NoProcs(t, w.profile)
}

// closedEach checks that the task log shows the browser's close verified
// (no process of ours left), or a successful attempt's browser kept warm
// for the session's next task, once per attempt. A successful attempt's
// browser closes, or is kept, just after its answer is written: its line
// may come a moment after the task's final state.
func closedEach(t *testing.T, r *rig.Rig, id string, attempts int) {
	t.Helper()
	count := func() int {
		l := r.TaskLog(taskfile.KindWeb, id)
		return strings.Count(l, "no process of ours remains") + strings.Count(l, "browser: kept warm")
	}
	testkit.WaitFS(t, fmt.Sprintf("the task log of %s to verify the close once per attempt (%d)", id, attempts), 10*time.Second,
		[]string{filepath.Dir(r.L.LogPath(taskfile.KindWeb, id))}, func() bool { return count() >= attempts })
	if n := count(); n != attempts {
		t.Errorf("task log verifies the close %d times, want once per attempt (%d):\n%s", n, attempts, r.TaskLog(taskfile.KindWeb, id))
	}
}

// SIGTERM while a web task streams: the daemon drains for shutdownGrace,
// then stops the attempt, closes the browser and puts the task back to
// pending without spending the attempt; afterwards `pgrep -f <profile>`
// finds nothing.
func TestE2E_Web_StopMidAnswer(t *testing.T) {
	w := e2eNewWeb(t, rig.Opts{Grace: time.Second}, 0.01, "")
	d := w.Start()
	w.Submit(rig.Task{ID: "interrupted", Model: "chat-web", Content: "[[duration=1000s]] long answer"})
	w.browserPID("interrupted")
	start := time.Now()
	d.Stop()
	took := time.Since(start)
	if pids := testkit.Pgrep(t, w.profile); len(pids) > 0 {
		t.Errorf("after the daemon stopped, pgrep -f %s finds %v", w.profile, pids)
	}
	testkit.NoProcs(t, w.profile)
	got := w.Read(taskfile.KindWeb, taskfile.DirPending, "interrupted")
	if got == nil {
		t.Fatalf("task is in %q, want pending", w.L.Locate(taskfile.KindWeb, "interrupted"))
	}
	if got.State != taskfile.StatePending || got.Attempt != 0 || !strings.Contains(got.Error, "shutdown") {
		t.Errorf("state %s attempt %d error %q; want pending, attempt 0, interrupted by shutdown", got.State, got.Attempt, got.Error)
	}
	closedEach(t, w.Rig, "interrupted", 1)
	t.Logf("SIGTERM mid-answer to exit: %s (shutdownGrace 1s, then the close)", took.Round(time.Millisecond))
}
