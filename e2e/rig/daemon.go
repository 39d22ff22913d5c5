// The daemons of the command's tests drive POSIX signals.

//go:build unix

package rig

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/doors/cli"
	"github.com/spoolgate/spoolgate/internal/testkit"
)

// DaemonConfig is the one config the command's daemon tests write: the
// reliability rig's (fake executors) and the end-to-end rig's (real ones)
// differ only in these values and in Tail (models:, sites:, accounts:,
// more top-level keys).
type DaemonConfig struct {
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
func (c DaemonConfig) write(t *testing.T, p string) string {
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

// Daemon is one `spoolgate run` subprocess of a test, started by launch:
// the reliability rig's (fake executors, traced) and the end-to-end rig's
// (real executors) alike.
type Daemon struct {
	T      *testing.T
	Name   string
	Cmd    *exec.Cmd
	log    string // its stdout and stderr
	Trace  string // its trace folder (the reliability rig's fakes)
	Done   chan struct{}
	ready  *testkit.Ready
	Err    error
	gentle bool // cleanup asks with SIGTERM first: real executors have browsers to close
}

// Launch starts `spoolgate run --config cfg` in dir with env, its output
// in out, and a readiness socket (NOTIFY_SOCKET) that waitReady waits on.
// At cleanup a daemon still running is ended: with SIGTERM, then SIGKILL
// after 20 s, if gentle (so it closes its browsers); else with SIGKILL at
// once, as a crash would. Its log's tail is shown if the test failed.
func Launch(t *testing.T, name, dir, cfg string, out *os.File, env []string, gentle bool) *Daemon {
	t.Helper()
	cmd := exec.Command("spoolgate", "run", "--config", cfg)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	ready := testkit.NewReady(t)
	cmd.Env = append(env, ready.Env())
	if err := cmd.Start(); err != nil {
		t.Fatalf("start daemon %s: %v", name, err)
	}
	d := &Daemon{T: t, Name: name, Cmd: cmd, log: out.Name(), Done: make(chan struct{}), ready: ready, gentle: gentle}
	go func() { d.Err = cmd.Wait(); close(d.Done) }()
	t.Cleanup(func() {
		if d.gentle && d.alive() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-d.Done:
			case <-time.After(20 * time.Second):
			}
		}
		_ = cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot die
		_ = cmd.Process.Kill()
		<-d.Done
		if t.Failed() {
			n, _ := strconv.Atoi(os.Getenv("SPOOLGATE_RELIABILITY_LOGTAIL"))
			log := d.LogText()
			t.Logf("daemon %s log (tail):\n%s", d.Name, testkit.Tail(log, max(n, 60)))
			if i := strings.Index(log, cli.BlockedDumpHeader); i >= 0 {
				t.Logf("daemon %s: what its shutdown was blocked on:\n%s", d.Name, log[i:])
			}
		}
	})
	return d
}

func (d *Daemon) PID() int { return d.Cmd.Process.Pid }

// WaitReady waits for the daemon's READY=1: it has recovered the spool and
// its lanes and intake run.
func (d *Daemon) WaitReady() {
	d.T.Helper()
	d.ready.Wait(d.T, "daemon "+d.Name, 30*time.Second) // generous: two cores shared with Chromium
}

// Kill SIGKILLs the daemon and waits for it; it returns the moment it was
// known dead (unix nano), which ends a traced call cut short.
func (d *Daemon) Kill() int64 {
	d.T.Helper()
	_ = d.Cmd.Process.Signal(syscall.SIGCONT)
	_ = d.Cmd.Process.Kill()
	<-d.Done
	return time.Now().UnixNano()
}

// Stop asks for a graceful stop (SIGTERM) and waits, failing on a non-zero
// exit.
func (d *Daemon) Stop() {
	d.T.Helper()
	_ = d.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.Done:
	case <-time.After(30 * time.Second):
		_ = d.Cmd.Process.Kill()
		<-d.Done
		d.T.Fatalf("daemon %s did not stop within 30s of SIGTERM\n%s", d.Name, testkit.Tail(d.LogText(), 40))
	}
	if d.Err != nil {
		d.T.Fatalf("daemon %s exited: %v\n%s", d.Name, d.Err, testkit.Tail(d.LogText(), 30))
	}
}

// alive reports whether the daemon process still runs.
func (d *Daemon) alive() bool {
	select {
	case <-d.Done:
		return false
	default:
		return true
	}
}

func (d *Daemon) MustBeAlive() {
	d.T.Helper()
	if !d.alive() {
		d.T.Fatalf("daemon %s died: %v\n%s", d.Name, d.Err, testkit.Tail(d.LogText(), 40))
	}
}

func (d *Daemon) LogText() string {
	b, _ := os.ReadFile(d.log)
	return string(b)
}

// WaitLog waits until the daemon's log contains s.
func (d *Daemon) WaitLog(s string, within time.Duration) {
	d.T.Helper()
	testkit.Wait(d.T, "daemon "+d.Name+" logs "+strconv.Quote(s), within, func() bool {
		return strings.Contains(d.LogText(), s)
	})
}
