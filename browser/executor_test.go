//go:build linux

package browser

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"

	"github.com/spoolgate/spoolgate/examples/chatstand"
)

func TestExecutor_Execute_One(t *testing.T) {
	e := newEnv(t, envOpts{})
	content := "[[duration=20s]] write a short poem"
	job, log := e.job(t, "chat-web", "", content)
	start := time.Now()
	res, err := e.exec.Execute(context.Background(), job)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Execute: %v\nlog:\n%s", err, log)
	}
	if want := chatstand.AnswerFor(content); res.Text != want {
		t.Fatalf("result %q, want %q", res.Text, want)
	}
	t.Logf("launch + one answer (%s scaled) + close: %s\nlog:\n%s", 200*time.Millisecond, took, log)
}

func TestExecutor_Execute_TenSequential(t *testing.T) {
	e := newEnv(t, envOpts{})
	for i := range 10 {
		content := fmt.Sprintf("[[duration=%ds]] task number %d", 5+i, i)
		job, log := e.job(t, "chat-web", "", content)
		res, err := e.exec.Execute(context.Background(), job)
		if err != nil {
			t.Fatalf("task %d: %v\nlog:\n%s", i, err, log)
		}
		if want := chatstand.AnswerFor(content); res.Text != want {
			t.Fatalf("task %d: result %q, want %q", i, res.Text, want)
		}
		if job.BrowserPID() == 0 {
			t.Fatalf("task %d: no browser pid recorded", i)
		}
	}
	if g, m, c := e.stand.Generations(), e.stand.MaxConcurrent(), e.stand.Collisions(); g != 10 || m != 1 || c != 0 {
		t.Fatalf("stand-in saw %d generations, max %d at once, %d collisions; want 10, 1, 0", g, m, c)
	}
}

func TestExecutor_Execute_NeedEmptyPrompt(t *testing.T) {
	e := newEnv(t, envOpts{instructions: "Default instructions: always answer in verse."})
	for _, c := range []struct {
		model, wantSystem string
	}{
		{"chat-web", ""},                 // needEmptyPrompt: no prompt, page default cleared
		{"chat-web-prompt", "Be brief."}, // the task's prompt replaces the default
	} {
		job, log := e.job(t, c.model, "Be brief.", "think about "+c.model)
		if _, err := e.exec.Execute(context.Background(), job); err != nil {
			t.Fatalf("%s: %v\nlog:\n%s", c.model, err, log)
		}
		rec := e.stand.Received()
		last := rec[len(rec)-1]
		if last.System != c.wantSystem || last.Content != "think about "+c.model {
			t.Errorf("%s: stand-in received system %q content %q, want system %q", c.model, last.System, last.Content, c.wantSystem)
		}
	}
}

func TestExecutor_Execute_LoggedOut(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.stand.LogoutAll()
	job, log := e.job(t, "chat-web", "", "hello")
	_, err := e.exec.Execute(context.Background(), job)
	if attempt.Classify(err) != taskfile.ClassAccount || !strings.Contains(err.Error(), "spoolgate login standin") {
		t.Fatalf("err %v (class %s), want account error naming `spoolgate login standin`\nlog:\n%s", err, attempt.Classify(err), log)
	}
	if e.stand.Generations() != 0 {
		t.Fatal("a generation started on a signed-out page")
	}
	if h := attempt.HoldOf(err); h == nil || h.Kind != taskfile.HoldSignedOut || !h.Until.IsZero() || h.Site != "standin" {
		t.Fatalf("hold %+v: want a signed-out hold on the account, until released", h)
	}
}

// The page's own "one message at a time" error (the account is busy
// elsewhere) fails the attempt as transient, with no answer taken.
func TestExecutor_Execute_PageCollision(t *testing.T) {
	e := newEnv(t, envOpts{})
	other := make(chan error, 1)
	go func() {
		resp, err := http.Post(e.stand.URL()+"api/generate", "application/json",
			strings.NewReader(`{"session":"demo","content":"[[duration=1000s]] busy elsewhere"}`))
		if err == nil {
			resp.Body.Close()
		}
		other <- err
	}()
	waitUntil(t, "the other generation", 5*time.Second, func() bool { return e.stand.Active() == 1 })
	job, log := e.job(t, "chat-web", "", "mine")
	_, err := e.exec.Execute(context.Background(), job)
	if attempt.Classify(err) != taskfile.ClassTransient || !strings.Contains(err.Error(), chatstand.ErrOneAtATime) {
		t.Fatalf("err %v, want transient with the page's error\nlog:\n%s", err, log)
	}
	_ = e.stand.Close() // ends the other generation
	<-other
}

// A generation that never ends fails at web.taskTimeout, counted from the
// start of the attempt; the timeout is long enough that a loaded machine's
// launch (seen: 2.9 s; over 8 s while a fresh machine compiles the suite)
// leaves the hang to be what it cuts.
func TestExecutor_Execute_Hang(t *testing.T) {
	const timeout = 20 * time.Second
	e := newEnv(t, envOpts{taskTimeout: timeout})
	job, log := e.job(t, "chat-web", "", "[[hang]] never ends")
	start := time.Now()
	_, err := e.exec.Execute(context.Background(), job)
	took := time.Since(start)
	if attempt.Classify(err) != taskfile.ClassTransient || !errors.Is(err, attempt.ErrTimeout) {
		t.Fatalf("err %v, want transient wrapping lanes.ErrTimeout\nlog:\n%s", err, log)
	}
	if e.stand.Generations() != 1 {
		t.Fatalf("stand-in saw %d generations, want the hung one (the timeout cut it, not an earlier stage)\nlog:\n%s", e.stand.Generations(), log)
	}
	// The hang ends at the timeout; what follows is bounded by the
	// executor's own budgets (saving the page, the close grace, the kill),
	// which a loaded machine may use up (CI saw 11.6 s past a 2 s timeout)
	// but never exceed.
	budget := timeout + artefactTimeout + closeGrace + killWait + settleGone
	if took < timeout || took > budget {
		t.Fatalf("took %s, want at least the %s taskTimeout and at most it plus the cleanup's budgets (%s)", took, timeout, budget)
	}
}

// runAsync starts Execute and returns its outcome channel.
type outcome struct {
	err  error
	took time.Duration
}

func runAsync(ctx context.Context, e *env, job *attempt.Job) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		start := time.Now()
		_, err := e.exec.Execute(ctx, job)
		ch <- outcome{err, time.Since(start)}
	}()
	return ch
}

func TestExecutor_Execute_BrowserKilled(t *testing.T) {
	e := newEnv(t, envOpts{})
	job, log := e.job(t, "chat-web", "", "[[duration=1000s]] long")
	done := runAsync(context.Background(), e, job)
	waitUntil(t, "the answer to stream", 60*time.Second, func() bool { return e.stand.Active() == 1 })
	if err := syscall.Kill(job.BrowserPID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if attempt.Classify(o.err) != taskfile.ClassTransient || !errors.Is(o.err, errBrowserGone) {
		t.Fatalf("err %v, want transient: browser exited\nlog:\n%s", o.err, log)
	}
}

func TestExecutor_Execute_Cancel(t *testing.T) {
	e := newEnv(t, envOpts{})
	job, log := e.job(t, "chat-web", "", "[[duration=1000s]] long")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := runAsync(ctx, e, job)
	waitUntil(t, "the answer to stream", 60*time.Second, func() bool { return e.stand.Active() == 1 })

	// The executor refuses a second attempt while one runs.
	job2, _ := e.job(t, "chat-web", "", "overlap")
	if _, err := e.exec.Execute(context.Background(), job2); !errors.Is(err, errOverlap) {
		t.Fatalf("overlapping Execute: %v, want errOverlap", err)
	}

	start := time.Now()
	cancel(attempt.ErrCanceled)
	o := <-done
	if !errors.Is(o.err, attempt.ErrCanceled) {
		t.Fatalf("err %v, want the cancel cause\nlog:\n%s", o.err, log)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Execute returned %s after the cancel", d)
	}
	testkit.NoProcs(t, e.profile)
	waitUntil(t, "the stand-in to see the generation end", 5*time.Second, func() bool { return e.stand.Active() == 0 })
}

func TestExecutor_Execute_StoppedBrowser(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.exec.ProbeTimeout = 500 * time.Millisecond
	e.exec.closeGrace = time.Second
	job, log := e.job(t, "chat-web", "", "[[hang]] long")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := runAsync(ctx, e, job)
	waitUntil(t, "the answer to stream", 60*time.Second, func() bool { return e.stand.Active() == 1 })
	probe := job.Probe()
	if probe == nil {
		t.Fatal("no probe installed")
	}
	if err := probe(context.Background()); err != nil {
		t.Fatalf("probe of a live browser: %v", err)
	}
	pid := job.BrowserPID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := probe(context.Background())
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("probe of a stopped browser: %v after %s, want an error within its timeout", err, time.Since(start))
	}
	// The lane's stale rule reclaims the task: its context ends.
	cancel(attempt.ErrStale)
	o := <-done
	if !errors.Is(o.err, attempt.ErrStale) {
		t.Fatalf("err %v, want the stale cause\nlog:\n%s", o.err, log)
	}
	if !strings.Contains(log.String(), "killing its tree") {
		t.Errorf("log does not say the stopped browser was killed:\n%s", log)
	}
}
