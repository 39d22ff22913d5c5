//go:build linux

package browser

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
)

// warmRun runs one task on e's executor and returns the job's browser pid.
func warmRun(t *testing.T, e *env, content string, wantOK bool) (int, string) {
	t.Helper()
	job, log := e.job(t, "chat-web", "", content)
	res, err := e.exec.Execute(context.Background(), job)
	switch {
	case wantOK && err != nil:
		t.Fatalf("%s: %v\nlog:\n%s", content, err, log)
	case wantOK && res.Text != chatstand.AnswerFor(content):
		t.Fatalf("%s: result %q, want %q", content, res.Text, chatstand.AnswerFor(content))
	case !wantOK && err == nil:
		t.Fatalf("%s: succeeded; want a failed attempt\nlog:\n%s", content, log)
	}
	if job.BrowserPID() == 0 {
		t.Fatalf("%s: no browser pid recorded", content)
	}
	return job.BrowserPID(), log.String()
}

// A warm session runs three tasks on one browser, each in a new chat, and
// checks the warm page as a fresh one: the text a page left in its input
// is cleared before typing. Release closes it and leaves nothing behind.
func TestExecutor_WarmThreeTasksOneLaunch(t *testing.T) {
	e := reattachEnv(t)
	var pids []int
	for i := range 3 {
		if i == 2 {
			e.stand.SetDraft("left over from an earlier visit")
		}
		pid, log := warmRun(t, e, fmt.Sprintf("warm task number %d", i), true)
		if i > 0 && !strings.Contains(log, "browser: warm; reused") {
			t.Fatalf("task %d: the log does not say the warm browser was reused:\n%s", i, log)
		}
		if !strings.Contains(log, "logged-in check") || !strings.Contains(log, "new chat") {
			t.Fatalf("task %d: the warm page was not checked and given a new chat:\n%s", i, log)
		}
		pids = append(pids, pid)
	}
	if n := e.exec.Launches(); n != 1 || pids[0] != pids[1] || pids[1] != pids[2] {
		t.Fatalf("%d launches, browser pids %v: want one browser for the three tasks", n, pids)
	}
	got := e.stand.Received()
	convs := map[string]bool{}
	for i, m := range got {
		if want := fmt.Sprintf("warm task number %d", i); m.Content != want || m.Conversation == "" {
			t.Fatalf("message %d: %q in conversation %q; want %q in a conversation of its own", i, m.Content, m.Conversation, want)
		}
		convs[m.Conversation] = true
	}
	if len(got) != 3 || len(convs) != 3 {
		t.Fatalf("the stand-in got %d messages in %d conversations; want 3 in 3 (a new chat per task)", len(got), len(convs))
	}
	if len(testkit.Pgrep(t, e.profile)) == 0 {
		t.Fatal("no browser on the profile between tasks: the session is not warm")
	}
	e.exec.Release(true)
	if left := testkit.Pgrep(t, e.profile); len(left) > 0 {
		t.Fatalf("Release(true) returned with processes on the profile: %v", left)
	}
}

// The warm browser is started again after a failed attempt and after
// web.warm.maxTasks tasks, would be above web.warm.maxMemoryMB, and
// closes by itself after web.warm.idle.
func TestExecutor_WarmRecycles(t *testing.T) {
	e := reattachEnv(t)
	e.cfg.Web.Warm.MaxTasks = 2
	p1, _ := warmRun(t, e, "recycle one", true)
	p2, _ := warmRun(t, e, "[[errorturn]] recycle two", false)
	if p2 != p1 {
		t.Fatalf("task 2 ran on browser %d, not the warm %d", p2, p1)
	}
	if len(testkit.Pgrep(t, e.profile)) > 0 {
		t.Fatal("the browser of a failed attempt is still there")
	}
	p3, _ := warmRun(t, e, "recycle three", true)
	// Above the memory limit: the warm browser would not run the next
	// task (asked directly; a launch costs seconds on a loaded machine).
	e.cfg.Web.Warm.MaxMemoryMB = 100 // a signed-in page alone holds more
	<-e.exec.warm.rssDone
	if why := e.exec.recycleReason(context.Background(), e.exec.warm); !strings.Contains(why, "above web.warm.maxMemoryMB (100)") {
		t.Fatalf("recycle reason %q; want the memory limit", why)
	}
	e.cfg.Web.Warm.MaxMemoryMB = 4096
	p4, _ := warmRun(t, e, "recycle four", true)
	e.cfg.Web.Warm.Idle = 1 // ns: the next warm browser closes at once
	p5, log := warmRun(t, e, "recycle five", true)
	if p3 == p1 || p4 != p3 || p5 == p4 || !strings.Contains(log, "web.warm.maxTasks (2)") {
		t.Fatalf("browser pids %d %d | %d %d | %d: want a new one after the failure and after two tasks\nlog:\n%s", p1, p2, p3, p4, p5, log)
	}
	waitUntil(t, "the idle warm browser to close", 10*time.Second, func() bool { return len(testkit.Pgrep(t, e.profile)) == 0 })
	if n := e.exec.Launches(); n != 3 {
		t.Fatalf("%d launches; want 3 (the first, after the failure, after maxTasks)", n)
	}
}
