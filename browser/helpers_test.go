//go:build linux

package browser

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestMain runs the tests, closes the package's shared browser (tab), and
// then looks for leaked goroutines, as goleak.VerifyTestMain would.
func TestMain(m *testing.M) {
	code := m.Run()
	closeShared()
	if code == 0 {
		if err := goleak.Find(
			// net/http keeps idle client connections' goroutines for a while.
			goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// needChromium skips (or, under CI=true, fails) when no browser is here.
func needChromium(t testing.TB) { testkit.NeedChromium(t) }

// syncBuf is testkit's goroutine-safe buffer.
type syncBuf = testkit.Buffer

// env is one test's stand-in, config and signed-in profile.
type env struct {
	stand   *chatstand.Server
	cfg     *config.Config
	profile string
	exec    *Executor
}

type envOpts struct {
	instructions string
	taskTimeout  time.Duration
	noLogin      bool
	stand        chatstand.Options // Scale and Instructions are set from the fields above
	// siteExtra are keys added to the stand-in's site (four spaces in).
	siteExtra string
	// site, if set, replaces the stand-in's site keys: a format with one
	// %q for the stand-in's URL, keys indented by four spaces.
	site string
	// models are more models (YAML flow mappings, one a line, "  - " in).
	models string
}

func newEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	needChromium(t)
	so := o.stand
	so.Scale, so.Instructions = 0.01, o.instructions
	stand, err := chatstand.Start(so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stand.Close() })
	if o.taskTimeout == 0 {
		o.taskTimeout = 30 * time.Second
	}
	site := testkit.StandinSite(stand.URL()) + o.siteExtra
	if o.site != "" {
		site = "  standin:\n" + fmt.Sprintf(o.site, stand.URL())
	}
	yaml := fmt.Sprintf(`
spool: %q
web:
  profiles: %q
  instance: test
  taskTimeout: %s
models:
  - {name: chat-web, kind: web, site: standin, needEmptyPrompt: true}
  - {name: chat-web-prompt, kind: web, site: standin, needEmptyPrompt: false}
%ssites:
%s`, filepath.Join(t.TempDir(), "spool"), t.TempDir(), o.taskTimeout, o.models, site)
	cfg, err := config.ParseConfig([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := spool.NewLayout(cfg.Spool).Create(); err != nil { // the daemon's spool, as it would be
		t.Fatal(err)
	}
	e := &env{stand: stand, cfg: cfg, profile: ProfileDir(cfg), exec: NewExecutor(cfg, nil)}
	e.exec.Timings = Timings{Quiet: 150 * time.Millisecond, PageLoad: 10 * time.Second, Start: 10 * time.Second}
	t.Cleanup(func() { e.exec.Release(true); testkit.NoProcs(t, e.profile) })
	if !o.noLogin {
		e.login(t)
	}
	return e
}

// login signs the profile in the way a person would: a browser on the
// profile opens the stand-in's login link; the cookie persists on disk.
func (e *env) login(t *testing.T) {
	t.Helper()
	if err := ensureProfile(e.profile); err != nil {
		t.Fatal(err)
	}
	b, err := Launch(context.Background(), e.cfg, e.profile, true, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(e.stand.URL()+"login?user=demo")); err != nil {
		t.Fatal(err)
	}
}

// job builds an attempt of a task on model.
func (e *env) job(t *testing.T, model, prompt, content string) (*attempt.Job, *syncBuf) {
	t.Helper()
	m, ok := e.cfg.Model(model)
	if !ok {
		t.Fatalf("no model %s", model)
	}
	buf := &syncBuf{}
	task := &taskfile.Task{TaskID: "t-" + strings.ReplaceAll(t.Name(), "/", "-"), Model: model, Prompt: prompt, Content: content}
	job := attempt.NewJob(task, m, slog.New(slog.NewTextHandler(buf, nil)))
	job.SetLogFiles(spool.NewStore(e.cfg, nil).LogFiles(taskfile.KindWeb)) // as a lane does
	return job, buf
}

// waitUntil is testkit.Wait under the name the browser's tests call it by
// (their files change in parallel work; one name here spares them edits).
func waitUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	testkit.Wait(t, what, d, cond)
}

func slogTo(w *syncBuf) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// innerTextNoCodeUI is the innerText of the element the expression el
// gives, with each code block's header (the element before its pre, a
// language label and a Copy button on the test pages) hidden for the
// read: the visible text the text method should return.
func innerTextNoCodeUI(ctx context.Context, t *testing.T, el string) string {
	t.Helper()
	vis, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const a = `+el+`; const hid = [];
for (const pre of a.querySelectorAll('pre')) { const h = pre.previousElementSibling; if (h && h.tagName !== 'P') { hid.push([h, h.style.display]); h.style.display = 'none'; } }
const t = a.innerText; for (const [h, d] of hid) h.style.display = d; return t; })()`))
	if err != nil {
		t.Fatal(err)
	}
	return vis
}
