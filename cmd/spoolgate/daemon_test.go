// The daemons of the command's tests drive POSIX signals.

//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
)

// daemonConfig is the one config the command's daemon tests write: the
// reliability rig's (fake executors) and the end-to-end rig's (real ones)
// differ only in these values and in Tail (models:, sites:, accounts:,
// more top-level keys).
type daemonConfig struct {
	Spool, Host                           string
	Settle, Rescan, Heartbeat, StaleAfter time.Duration
	RetryBackoff, Grace                   time.Duration
	Poll                                  bool
	MaxRetries                            int
	HTTP                                  string
	APIConc                               int           // 0: the key is left out (the default, 3)
	Profiles                              string        // web.profiles
	Instance                              string        // web.instance; "": left out
	TaskTimeout                           time.Duration // web.taskTimeout; 0: left out
	Tail                                  string
}

// write writes the config to p and returns its text.
func (c daemonConfig) write(t *testing.T, p string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "spool: %q\nhost: %s\nsettle: %s\nrescan: %s\npoll: %t\nheartbeat: %s\nstaleAfter: %s\nmaxRetries: %d\nretryBackoff: %s\nshutdownGrace: %s\nhttp: %q\n",
		c.Spool, c.Host, c.Settle, c.Rescan, c.Poll, c.Heartbeat, c.StaleAfter, c.MaxRetries, c.RetryBackoff, c.Grace, c.HTTP)
	if c.APIConc != 0 {
		fmt.Fprintf(&b, "api: {concurrency: %d}\n", c.APIConc)
	}
	fmt.Fprintf(&b, "web:\n  profiles: %q\n", c.Profiles)
	if c.Instance != "" {
		fmt.Fprintf(&b, "  instance: %s\n", c.Instance)
	}
	if c.TaskTimeout != 0 {
		fmt.Fprintf(&b, "  taskTimeout: %s\n", c.TaskTimeout)
	}
	b.WriteString(c.Tail)
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// daemon is one `spoolgate run` subprocess of a test, started by launch:
// the reliability rig's (fake executors, traced) and the end-to-end rig's
// (real executors) alike.
type daemon struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	log    string // its stdout and stderr
	trace  string // its trace folder (the reliability rig's fakes)
	done   chan struct{}
	ready  *testkit.Ready
	err    error
	gentle bool // cleanup asks with SIGTERM first: real executors have browsers to close
}

// launch starts `spoolgate run --config cfg` in dir with env, its output
// in out, and a readiness socket (NOTIFY_SOCKET) that waitReady waits on.
// At cleanup a daemon still running is ended: with SIGTERM, then SIGKILL
// after 20 s, if gentle (so it closes its browsers); else with SIGKILL at
// once, as a crash would. Its log's tail is shown if the test failed.
func launch(t *testing.T, name, dir, cfg string, out *os.File, env []string, gentle bool) *daemon {
	t.Helper()
	cmd := exec.Command("spoolgate", "run", "--config", cfg)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	ready := testkit.NewReady(t)
	cmd.Env = append(env, ready.Env())
	if err := cmd.Start(); err != nil {
		t.Fatalf("start daemon %s: %v", name, err)
	}
	d := &daemon{t: t, name: name, cmd: cmd, log: out.Name(), done: make(chan struct{}), ready: ready, gentle: gentle}
	go func() { d.err = cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		if d.gentle && d.alive() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-d.done:
			case <-time.After(20 * time.Second):
			}
		}
		_ = cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot die
		_ = cmd.Process.Kill()
		<-d.done
		if t.Failed() {
			n, _ := strconv.Atoi(os.Getenv("SPOOLGATE_RELIABILITY_LOGTAIL"))
			log := d.logText()
			t.Logf("daemon %s log (tail):\n%s", d.name, testkit.Tail(log, max(n, 60)))
			if i := strings.Index(log, blockedDumpHeader); i >= 0 {
				t.Logf("daemon %s: what its shutdown was blocked on:\n%s", d.name, log[i:])
			}
		}
	})
	return d
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

// waitReady waits for the daemon's READY=1: it has recovered the spool and
// its lanes and intake run.
func (d *daemon) waitReady() {
	d.t.Helper()
	d.ready.Wait(d.t, "daemon "+d.name, 30*time.Second) // generous: two cores shared with Chromium
}

// kill SIGKILLs the daemon and waits for it; it returns the moment it was
// known dead (unix nano), which ends a traced call cut short.
func (d *daemon) kill() int64 {
	d.t.Helper()
	_ = d.cmd.Process.Signal(syscall.SIGCONT)
	_ = d.cmd.Process.Kill()
	<-d.done
	return time.Now().UnixNano()
}

// stop asks for a graceful stop (SIGTERM) and waits, failing on a non-zero
// exit.
func (d *daemon) stop() {
	d.t.Helper()
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
		d.t.Fatalf("daemon %s did not stop within 30s of SIGTERM\n%s", d.name, testkit.Tail(d.logText(), 40))
	}
	if d.err != nil {
		d.t.Fatalf("daemon %s exited: %v\n%s", d.name, d.err, testkit.Tail(d.logText(), 30))
	}
}

// alive reports whether the daemon process still runs.
func (d *daemon) alive() bool {
	select {
	case <-d.done:
		return false
	default:
		return true
	}
}

func (d *daemon) mustBeAlive() {
	d.t.Helper()
	if !d.alive() {
		d.t.Fatalf("daemon %s died: %v\n%s", d.name, d.err, testkit.Tail(d.logText(), 40))
	}
}

func (d *daemon) logText() string {
	b, _ := os.ReadFile(d.log)
	return string(b)
}

// waitLog waits until the daemon's log contains s.
func (d *daemon) waitLog(s string, within time.Duration) {
	d.t.Helper()
	testkit.Wait(d.t, "daemon "+d.name+" logs "+strconv.Quote(s), within, func() bool {
		return strings.Contains(d.logText(), s)
	})
}
