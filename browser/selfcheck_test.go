//go:build linux

package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A Chromium left running on our profile (started detached, in its own
// session, with a debugging port) is found, killed and reported; the task
// then succeeds.
func TestExecutor_Execute_LeftoverBrowser(t *testing.T) {
	e := newEnv(t, envOpts{})
	path, err := FindBrowser(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--no-first-run", "--disable-background-networking",
		"--user-data-dir="+e.profile, "--remote-debugging-port=0", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }() // reap it, whoever kills it
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	waitUntil(t, "the leftover to write DevToolsActivePort", 10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(e.profile, devToolsPortFile))
		return err == nil
	})

	job, log := e.job(t, "chat-web", "", "after the leftover")
	if _, err := e.exec.Execute(context.Background(), job); err != nil {
		t.Fatalf("Execute: %v\nlog:\n%s", err, log)
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the leftover browser still runs")
	}
	if s := log.String(); !strings.Contains(s, "self-check: found leftover browser") || !strings.Contains(s, fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Fatalf("job log does not report the leftover pid %d:\n%s", cmd.Process.Pid, s)
	}
	t.Logf("job log:\n%s", log)
}

// A foreign process holding the profile's SingletonLock fails the attempt
// as environment with the hint, and is not killed.
func TestExecutor_Execute_ForeignLockHolder(t *testing.T) {
	e := newEnv(t, envOpts{noLogin: true})
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleep.Process.Kill(); _ = sleep.Wait() })
	if err := ensureProfile(e.profile); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if err := os.Symlink(fmt.Sprintf("%s-%d", host, sleep.Process.Pid), filepath.Join(e.profile, singletonLock)); err != nil {
		t.Fatal(err)
	}
	job, log := e.job(t, "chat-web", "", "blocked")
	_, err := e.exec.Execute(context.Background(), job)
	want := fmt.Sprintf("is in use by pid %d (sleep, sleep 60); another tool or spoolgate instance uses it: close it or give this instance its own web.instance", sleep.Process.Pid)
	if attempt.Classify(err) != taskfile.ClassEnvironment || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v (class %s), want environment error with %q", err, attempt.Classify(err), want)
	}
	if !strings.Contains(log.String(), want) {
		t.Errorf("job log lacks the hint:\n%s", log)
	}
	if err := sleep.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the foreign process was killed: %v", err)
	}
	if job.BrowserPID() != 0 {
		t.Fatal("a browser was launched on a profile in use")
	}
}

// A lock naming a dead pid of this host is stale: removed, and the task runs.
func TestExecutor_Execute_StaleLock(t *testing.T) {
	e := newEnv(t, envOpts{})
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	lock := filepath.Join(e.profile, singletonLock)
	_ = os.Remove(lock)
	if err := os.Symlink(fmt.Sprintf("%s-%d", host, dead.Process.Pid), lock); err != nil {
		t.Fatal(err)
	}
	job, log := e.job(t, "chat-web", "", "after a stale lock")
	if _, err := e.exec.Execute(context.Background(), job); err != nil {
		t.Fatalf("Execute: %v\nlog:\n%s", err, log)
	}
	if !strings.Contains(log.String(), "removed stale profile lock") {
		t.Errorf("log does not report the stale lock:\n%s", log)
	}
}

func TestSelfCheck_Clean(t *testing.T) {
	dir := t.TempDir()
	buf := &syncBuf{}
	start := time.Now()
	if err := SelfCheck(dir, slogTo(buf)); err != nil {
		t.Fatal(err)
	}
	t.Logf("self-check took %s", time.Since(start))
	if !strings.Contains(buf.String(), "self-check: clean") {
		t.Fatalf("log: %s", buf)
	}
}

func TestNamesProfile(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"chromium", "--user-data-dir=/p/default"}, true},
		{[]string{"chromium", "--user-data-dir=/p/default/"}, true},
		{[]string{"chromium", "--user-data-dir=/p/default2"}, false},
		{[]string{"chromium", "--user-data-dir=/p/default-a2"}, false}, // another session's profile
		{[]string{"vim", "/p/default/Cookies"}, false},
	} {
		if got := namesProfile(c.args, "/p/default"); got != c.want {
			t.Errorf("namesProfile(%q) = %v", c.args, got)
		}
	}
}

// Without a display, Login fails at once (it never falls back to a
// headless browser nobody can sign in with) and leaves nothing running.
func TestLogin_NoDisplay(t *testing.T) {
	e := newEnv(t, envOpts{noLogin: true})
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	err := Login(ctx, e.cfg, "standin", nil)
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("Login: %v after %s, want a prompt error", err, time.Since(start))
	}
	if err := Login(ctx, e.cfg, "nosuch", nil); err == nil {
		t.Fatal("Login of an unknown site succeeded")
	}
}

// Each web session's self-check finds and kills leftovers of its own
// profile only: a browser running on another session's profile (the next
// account's <instance>-NAME) is left alone.
func TestSelfCheck_OtherSessionUntouched(t *testing.T) {
	e := newEnv(t, envOpts{})
	path, err := FindBrowser(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	other := e.profile + "-a2"
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--no-first-run", "--disable-background-networking",
		"--user-data-dir="+other, "--remote-debugging-port=0", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	waitUntil(t, "the other session's browser to write DevToolsActivePort", 10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(other, devToolsPortFile))
		return err == nil
	})
	if err := SelfCheck(e.profile, slogTo(&syncBuf{})); err != nil {
		t.Fatalf("self-check of our profile: %v", err)
	}
	if procs, err := profileProcs(other); err != nil || len(procs) == 0 {
		t.Fatalf("the other session's browser is gone after our self-check (%v)", err)
	}
	select {
	case <-exited:
		t.Fatal("our self-check killed the other session's browser")
	default:
	}
}
