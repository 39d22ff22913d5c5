// The command's daemon tests drive POSIX signals.

//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/seal"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// rig is the one daemon rig of the command's tests: a spool, its config
// and the `spoolgate run` subprocesses a test starts on it (the test
// binary itself, found on PATH as spoolgate thanks to testscript.Main in
// TestMain). Two kinds of test use it:
//
//   - the end-to-end tests (issues 4 and 5, and every feature since) run
//     the daemon with its REAL executors: apimodel against the API
//     stand-ins and a real headless Chromium against the chat stand-ins;
//   - the reliability suite (issue 8) sets Fake, so both lanes run the
//     lanestest fakes (an exclusive chat session, an API quota), traced
//     from outside across kills, and starts several daemons (hosts) on
//     one spool with startHost.
//
// Figures go to the test log on lines that start with "reliability:",
// which `make reliability` keeps.
type rig struct {
	t        *testing.T
	dir      string // the test's own temp folder
	spool    string // opts.Spool: dir/spool unless the test put it on a share
	opts     rigOpts
	cfgPath  string // the rig's own config (dir/spoolgate.yaml): cli and start use it
	cfg      *config.Config
	L        spool.Layout
	profiles string    // web.profiles of the rig's own config
	env      []string  // extra environment for every spoolgate process
	key      *seal.Key // the installation's key beside the config; nil with OwnKey
}

// rigOpts shapes one test's spool and config. Zero fields take the small
// periods the suites run with (defaults).
type rigOpts struct {
	Fake        bool   // run the lanestest fakes (SPOOLGATE_FAKE), not the real executors
	Spool       string // default <tmp>/spool
	Settle      time.Duration
	Rescan      time.Duration
	Poll        bool
	Heartbeat   time.Duration
	StaleAfter  time.Duration
	MaxRetries  int  // default 2; set Retries0 for none
	Retries0    bool // maxRetries: 0
	TaskTimeout time.Duration
	Grace       time.Duration // shutdownGrace
	HTTP        string        // the status page's address; default "off"
	APIConc     int           // 0: the key is left out (the default, 3), or 3 with Fake
	Accounts    []string      // with Fake: web accounts of site chat, one session each
	OwnKey      bool          // no key file: the daemon creates its own (another installation)
	Tail        string        // more config (YAML): models:, sites:, other top-level keys; with Fake, after the fakes' models
}

// defaults fills the zero fields: the fakes run faster periods than the
// real executors, whose browsers need room.
func (o *rigOpts) defaults(dir string) {
	if o.Spool == "" {
		o.Spool = filepath.Join(dir, "spool")
	}
	if o.Settle == 0 {
		o.Settle = 100 * time.Millisecond
	}
	if o.Rescan == 0 {
		o.Rescan = 200 * time.Millisecond
	}
	if o.MaxRetries == 0 && !o.Retries0 {
		o.MaxRetries = 2
	}
	if o.HTTP == "" {
		o.HTTP = "off"
	}
	pick := func(d *time.Duration, fake, real time.Duration) {
		switch {
		case *d != 0:
		case o.Fake:
			*d = fake
		default:
			*d = real
		}
	}
	pick(&o.Heartbeat, 50*time.Millisecond, 200*time.Millisecond)
	pick(&o.StaleAfter, 500*time.Millisecond, time.Second)
	pick(&o.Grace, 2*time.Second, 5*time.Second)
	pick(&o.TaskTimeout, 0, 30*time.Second) // web.taskTimeout; the fakes have none
	if o.Fake && o.APIConc == 0 {
		o.APIConc = 3
	}
}

// fakeTail is the config of the fakes' models: both executors are
// lanestest fakes (SPOOLGATE_FAKE), so the addresses are never dialled.
const fakeTail = `models:
  - {name: fast, kind: api, baseURL: "http://127.0.0.1:9/v1"}
  - {name: chat, kind: web, site: chat}
sites:
  chat: {url: "http://127.0.0.1:9/", input: textarea, send: button, answer: .answer}
`

// sharedKey is the installation key of every rig of the test binary (two
// rigs on one spool are two hosts of one installation).
var sharedKey = seal.New()

// newRig writes the rig's own config and parses it back as the daemon
// will; env is extra environment for every process it starts.
func newRig(t *testing.T, o rigOpts, env ...string) *rig {
	t.Helper()
	dir := t.TempDir()
	o.defaults(dir)
	r := &rig{t: t, dir: dir, spool: o.Spool, opts: o, profiles: filepath.Join(dir, "profiles"), env: env}
	host, instance := "e2e", "e2e"
	if o.Fake {
		host, instance = "h1", ""
	}
	r.cfgPath = r.writeConfig("spoolgate", host, instance, r.profiles)
	c, err := config.LoadConfig(r.cfgPath)
	if err != nil {
		data, _ := os.ReadFile(r.cfgPath)
		t.Fatalf("config: %v\n%s", err, data)
	}
	r.cfg = c
	r.L = spool.NewLayout(c.Spool)
	return r
}

// writeConfig writes dir/NAME.yaml for one daemon (its host, instance and
// profiles folder: two daemons that share a profiles folder share the web
// lock) and, unless OwnKey, the installation's key beside it, copied as
// an operator would (README, "Who may write what").
func (r *rig) writeConfig(name, host, instance, profiles string) string {
	r.t.Helper()
	o := r.opts
	tail := o.Tail
	if o.Fake {
		tail = fakeTail
		if len(o.Accounts) > 0 {
			tail += "accounts:\n"
			for _, a := range o.Accounts {
				tail += "  " + a + ": {site: chat}\n"
			}
		}
		tail += o.Tail
	}
	c := daemonConfig{Spool: o.Spool, Host: host, Settle: o.Settle, Rescan: o.Rescan, Poll: o.Poll,
		Heartbeat: o.Heartbeat, StaleAfter: o.StaleAfter, MaxRetries: o.MaxRetries, RetryBackoff: r.backoff(),
		Grace: o.Grace, HTTP: o.HTTP, APIConc: o.APIConc, Profiles: profiles, Instance: instance,
		TaskTimeout: o.TaskTimeout, Tail: tail}
	p := filepath.Join(r.dir, name+".yaml")
	c.write(r.t, p)
	if !o.OwnKey && r.key == nil {
		r.key = sharedKey
		if _, err := os.Stat(seal.PathFor(p)); err != nil {
			if err := sharedKey.Write(seal.PathFor(p)); err != nil {
				r.t.Fatal(err)
			}
		}
	}
	return p
}

// backoff is retryBackoff: short for the fakes, room for a browser's
// close for the real executors.
func (r *rig) backoff() time.Duration {
	if r.opts.Fake {
		return 10 * time.Millisecond
	}
	return 50 * time.Millisecond
}

// environ is the environment of the rig's processes: a Fake rig's is this
// process's with SPOOLGATE_FAKE=1; a real-executor rig's is this
// process's without SPOOLGATE_* (so no fake runs); then the rig's own
// and extra.
func (r *rig) environ(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if r.opts.Fake || !strings.HasPrefix(kv, "SPOOLGATE_") {
			env = append(env, kv)
		}
	}
	if r.opts.Fake {
		env = append(env, "SPOOLGATE_FAKE=1")
	}
	return append(append(env, r.env...), extra...)
}

// store is a Store over the rig's spool with the installation's key, as
// a command of this installation opens it: what the daemon seals (holds,
// leases, markers) the test reads as genuine.
func (r *rig) store() *spool.Store {
	st := spool.NewStore(r.cfg, nil)
	st.Seal = r.key
	return st
}

// start runs the daemon of the rig's own config; its output goes to
// daemon.stderr beside the spool, truncated at each start. At cleanup a
// daemon still running is stopped with SIGTERM (then SIGKILL).
func (r *rig) start() *daemon {
	r.t.Helper()
	f, err := os.Create(filepath.Join(r.dir, "daemon.stderr"))
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	return launch(r.t, "e2e", r.dir, r.cfgPath, f, r.environ(), true)
}

// daemonOpts shapes one more daemon (host) on the rig: startHost.
type daemonOpts struct {
	Name     string // distinct per daemon in a test; names config, log and trace
	Host     string // default "h1"
	Profiles string // default <rig>/profiles (shared: the web lock is shared)
	Trace    string // default <rig>/trace-NAME (the fakes' trace)
	Scale    float64
	Env      []string // more environment (SPOOLGATE_FAKE_CHAT=URL...)
}

// startHost runs one more daemon on the rig's spool, with a config of its
// own (host, profiles); a Fake rig's fakes trace each call into o.Trace.
// It is killed (SIGKILL) at cleanup if the test has not stopped it, as a
// crash would; a real-executor daemon is asked with SIGTERM first.
func (r *rig) startHost(o daemonOpts) *daemon {
	r.t.Helper()
	if o.Host == "" {
		o.Host = "h1"
	}
	if o.Profiles == "" {
		o.Profiles = r.profiles
	}
	if o.Trace == "" {
		o.Trace = filepath.Join(r.dir, "trace-"+o.Name)
	}
	if err := os.MkdirAll(o.Trace, 0o700); err != nil {
		r.t.Fatal(err)
	}
	instance := ""
	if !r.opts.Fake {
		instance = o.Name
	}
	cfg := r.writeConfig(o.Name, o.Host, instance, o.Profiles)
	lf, err := os.OpenFile(filepath.Join(r.dir, o.Name+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		r.t.Fatal(err)
	}
	defer lf.Close()
	env := r.environ("SPOOLGATE_FAKE_TRACE=" + o.Trace)
	if o.Scale != 0 {
		env = append(env, "SPOOLGATE_FAKE_SCALE="+strconv.FormatFloat(o.Scale, 'f', -1, 64))
	}
	d := launch(r.t, o.Name, r.dir, cfg, lf, append(env, o.Env...), !r.opts.Fake)
	d.trace = o.Trace
	return d
}

// cli runs one short spoolgate command on the rig's config and returns its
// stdout; a non-zero exit fails the test.
func (r *rig) cli(args ...string) string {
	r.t.Helper()
	code, out, errOut := r.e2eRun(args...)
	if code != 0 {
		r.t.Fatalf("spoolgate %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// e2eRun runs one spoolgate command on the rig's config and returns its
// exit status, stdout and stderr.
func (r *rig) e2eRun(args ...string) (int, string, string) {
	r.t.Helper()
	cmd := exec.Command("spoolgate", append(args, "--config", r.cfgPath)...)
	cmd.Dir = r.dir
	cmd.Env = r.environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatalf("spoolgate %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errb.String()
}

// e2eTask is a task to submit.
type e2eTask struct {
	ID, Model, Prompt, Content, Output, Batch string
}

// submit writes the tasks as files in the rig's folder (outside the spool)
// and drops them all with one `spoolgate submit`.
func (r *rig) submit(tasks ...e2eTask) {
	r.t.Helper()
	src := filepath.Join(r.dir, "drops")
	if err := os.MkdirAll(src, 0o700); err != nil {
		r.t.Fatal(err)
	}
	args := []string{"submit"}
	for _, tk := range tasks {
		t := taskfile.Task{TaskID: tk.ID, Model: tk.Model, Prompt: tk.Prompt, Content: tk.Content, Output: tk.Output, Batch: tk.Batch}
		data, err := t.Encode()
		if err != nil {
			r.t.Fatal(err)
		}
		p := filepath.Join(src, tk.ID+".yaml")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			r.t.Fatal(err)
		}
		args = append(args, p)
	}
	out := r.cli(args...)
	for _, tk := range tasks {
		if !strings.Contains(out, tk.ID) {
			r.t.Fatalf("submit did not print %s: %q", tk.ID, out)
		}
	}
}

// read decodes the task file in lane k, folder dir, or returns nil.
func (r *rig) read(k taskfile.Kind, dir, id string) *taskfile.Task {
	data, err := os.ReadFile(r.L.TaskPath(k, dir, id))
	if err != nil {
		return nil
	}
	t, err := taskfile.DecodeTask(data)
	if err != nil {
		r.t.Fatalf("task %s in %s/%s: %v\n%s", id, k, dir, err, data)
	}
	return t
}

// final waits until task id is in done/, failed/ or canceled/ of lane k
// and returns it; it wakes at each event in those folders.
func (r *rig) final(k taskfile.Kind, id string, within time.Duration) *taskfile.Task {
	r.t.Helper()
	var t *taskfile.Task
	dirs := []string{r.L.Lane(k, taskfile.DirDone), r.L.Lane(k, taskfile.DirFailed), r.L.Lane(k, taskfile.DirCanceled)}
	testkit.WaitFS(r.t, "task "+id+" to finish", within, dirs, func() bool {
		switch dir := r.L.Locate(k, id); dir {
		case taskfile.DirDone, taskfile.DirFailed, taskfile.DirCanceled:
			t = r.read(k, dir, id)
			return t != nil
		}
		return false
	})
	return t
}

// running waits until task id is in running/ with cond true and returns
// it; it wakes at each event in running/ (every heartbeat is one).
func (r *rig) running(k taskfile.Kind, id string, within time.Duration, cond func(*taskfile.Task) bool) *taskfile.Task {
	r.t.Helper()
	var t *taskfile.Task
	testkit.WaitFS(r.t, "task "+id+" running", within, []string{r.L.Lane(k, taskfile.DirRunning)}, func() bool {
		t = r.read(k, taskfile.DirRunning, id)
		return t != nil && t.State == taskfile.StateRunning && cond(t)
	})
	return t
}

// taskLog is the task's own log file.
func (r *rig) taskLog(k taskfile.Kind, id string) string {
	b, _ := os.ReadFile(r.L.LogPath(k, id))
	return string(b)
}
