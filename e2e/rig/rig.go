// The command's daemon tests drive POSIX signals.

//go:build unix

package rig

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

// Rig is the one daemon rig of the end-to-end tests: a spool, its config
// and the `spoolgate run` subprocesses a test starts on it (the test
// binary itself, found on PATH as spoolgate thanks to Main). Two kinds of
// test use it:
//
//   - the end-to-end tests (issues 4 and 5, and every feature since) run
//     the daemon with its REAL executors: apimodel against the API
//     stand-ins and a real headless Chromium against the chat stand-ins;
//   - the reliability suite (issue 8) sets Fake, so both lanes run the
//     lanestest fakes (an exclusive chat session, an API quota), traced
//     from outside across kills, and starts several daemons (hosts) on
//     one spool with StartHost.
//
// Figures go to the test log on lines that start with "reliability:",
// which `make soak` keeps.
type Rig struct {
	T        *testing.T
	Dir      string // the test's own temp folder
	Spool    string // opts.Spool: dir/spool unless the test put it on a share
	Opts     Opts
	CfgPath  string // the rig's own config (dir/spoolgate.yaml): cli and start use it
	Cfg      *config.Config
	L        spool.Layout
	Profiles string    // web.profiles of the rig's own config
	Env      []string  // extra environment for every spoolgate process
	key      *seal.Key // the installation's key beside the config; nil with OwnKey
}

// Opts shapes one test's spool and config. Zero fields take the small
// periods the suites run with (defaults).
type Opts struct {
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
func (o *Opts) defaults(dir string) {
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

// FakeTail is the config of the fakes' models: both executors are
// lanestest fakes (SPOOLGATE_FAKE), so the addresses are never dialled.
const FakeTail = `models:
  - {name: fast, kind: api, baseURL: "http://127.0.0.1:9/v1"}
  - {name: chat, kind: web, site: chat}
sites:
  chat: {url: "http://127.0.0.1:9/", input: textarea, send: button, answer: .answer}
`

// SharedKey is the installation key of every rig of the test binary (two
// rigs on one spool are two hosts of one installation).
var SharedKey = seal.New()

// New writes the rig's own config and parses it back as the daemon
// will; env is extra environment for every process it starts.
func New(t *testing.T, o Opts, env ...string) *Rig {
	t.Helper()
	dir := t.TempDir()
	o.defaults(dir)
	r := &Rig{T: t, Dir: dir, Spool: o.Spool, Opts: o, Profiles: filepath.Join(dir, "profiles"), Env: env}
	host, instance := "e2e", "e2e"
	if o.Fake {
		host, instance = "h1", ""
	}
	r.CfgPath = r.writeConfig("spoolgate", host, instance, r.Profiles)
	c, err := config.LoadConfig(r.CfgPath)
	if err != nil {
		data, _ := os.ReadFile(r.CfgPath)
		t.Fatalf("config: %v\n%s", err, data)
	}
	r.Cfg = c
	r.L = spool.NewLayout(c.Spool)
	return r
}

// writeConfig writes dir/NAME.yaml for one daemon (its host, instance and
// profiles folder: two daemons that share a profiles folder share the web
// lock) and, unless OwnKey, the installation's key beside it, copied as
// an operator would (README, "Who may write what").
func (r *Rig) writeConfig(name, host, instance, profiles string) string {
	r.T.Helper()
	o := r.Opts
	tail := o.Tail
	if o.Fake {
		tail = FakeTail
		if len(o.Accounts) > 0 {
			tail += "accounts:\n"
			for _, a := range o.Accounts {
				tail += "  " + a + ": {site: chat}\n"
			}
		}
		tail += o.Tail
	}
	c := DaemonConfig{Spool: o.Spool, Host: host, Settle: o.Settle, Rescan: o.Rescan, Poll: o.Poll,
		Heartbeat: o.Heartbeat, StaleAfter: o.StaleAfter, MaxRetries: o.MaxRetries, RetryBackoff: r.backoff(),
		Grace: o.Grace, HTTP: o.HTTP, APIConc: o.APIConc, Profiles: profiles, Instance: instance,
		TaskTimeout: o.TaskTimeout, Tail: tail}
	p := filepath.Join(r.Dir, name+".yaml")
	c.write(r.T, p)
	if !o.OwnKey && r.key == nil {
		r.key = SharedKey
		if _, err := os.Stat(seal.PathFor(p)); err != nil {
			if err := SharedKey.Write(seal.PathFor(p)); err != nil {
				r.T.Fatal(err)
			}
		}
	}
	return p
}

// backoff is retryBackoff: short for the fakes, room for a browser's
// close for the real executors.
func (r *Rig) backoff() time.Duration {
	if r.Opts.Fake {
		return 10 * time.Millisecond
	}
	return 50 * time.Millisecond
}

// environ is the environment of the rig's processes: a Fake rig's is this
// process's with SPOOLGATE_FAKE=1; a real-executor rig's is this
// process's without SPOOLGATE_* (so no fake runs); then the rig's own
// and extra.
func (r *Rig) environ(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if r.Opts.Fake || !strings.HasPrefix(kv, "SPOOLGATE_") {
			env = append(env, kv)
		}
	}
	if r.Opts.Fake {
		env = append(env, "SPOOLGATE_FAKE=1")
	}
	return append(append(env, r.Env...), extra...)
}

// Store is a Store over the rig's spool with the installation's key, as
// a command of this installation opens it: what the daemon seals (holds,
// leases, markers) the test reads as genuine.
func (r *Rig) Store() *spool.Store {
	st := spool.NewStore(r.Cfg, nil)
	st.Seal = r.key
	return st
}

// Start runs the daemon of the rig's own config; its output goes to
// Daemon.stderr beside the spool, truncated at each start. At cleanup a
// Daemon still running is stopped with SIGTERM (then SIGKILL).
func (r *Rig) Start() *Daemon {
	r.T.Helper()
	f, err := os.Create(filepath.Join(r.Dir, "daemon.stderr"))
	if err != nil {
		r.T.Fatal(err)
	}
	defer f.Close()
	return Launch(r.T, "e2e", r.Dir, r.CfgPath, f, r.environ(), true)
}

// DaemonOpts shapes one more daemon (host) on the rig: startHost.
type DaemonOpts struct {
	Name     string // distinct per daemon in a test; names config, log and trace
	Host     string // default "h1"
	Profiles string // default <rig>/profiles (shared: the web lock is shared)
	Trace    string // default <rig>/trace-NAME (the fakes' trace)
	Scale    float64
	Env      []string // more environment (SPOOLGATE_FAKE_CHAT=URL...)
}

// StartHost runs one more daemon on the rig's spool, with a config of its
// own (host, profiles); a Fake rig's fakes trace each call into o.Trace.
// It is killed (SIGKILL) at cleanup if the test has not stopped it, as a
// crash would; a real-executor daemon is asked with SIGTERM first.
func (r *Rig) StartHost(o DaemonOpts) *Daemon {
	r.T.Helper()
	if o.Host == "" {
		o.Host = "h1"
	}
	if o.Profiles == "" {
		o.Profiles = r.Profiles
	}
	if o.Trace == "" {
		o.Trace = filepath.Join(r.Dir, "trace-"+o.Name)
	}
	if err := os.MkdirAll(o.Trace, 0o700); err != nil {
		r.T.Fatal(err)
	}
	instance := ""
	if !r.Opts.Fake {
		instance = o.Name
	}
	cfg := r.writeConfig(o.Name, o.Host, instance, o.Profiles)
	lf, err := os.OpenFile(filepath.Join(r.Dir, o.Name+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		r.T.Fatal(err)
	}
	defer lf.Close()
	env := r.environ("SPOOLGATE_FAKE_TRACE=" + o.Trace)
	if o.Scale != 0 {
		env = append(env, "SPOOLGATE_FAKE_SCALE="+strconv.FormatFloat(o.Scale, 'f', -1, 64))
	}
	d := Launch(r.T, o.Name, r.Dir, cfg, lf, append(env, o.Env...), !r.Opts.Fake)
	d.Trace = o.Trace
	return d
}

// cli runs one short spoolgate command on the rig's config and returns its
// stdout; a non-zero exit fails the test.
func (r *Rig) CLI(args ...string) string {
	r.T.Helper()
	code, out, errOut := r.Run(args...)
	if code != 0 {
		r.T.Fatalf("spoolgate %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// Run runs one spoolgate command on the rig's config and returns its
// exit status, stdout and stderr.
func (r *Rig) Run(args ...string) (int, string, string) {
	r.T.Helper()
	cmd := exec.Command("spoolgate", append(args, "--config", r.CfgPath)...)
	cmd.Dir = r.Dir
	cmd.Env = r.environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.T.Fatalf("spoolgate %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errb.String()
}

// Task is a task to submit.
type Task struct {
	ID, Model, Prompt, Content, Output, Batch string
	After                                     []string // the tasks it waits for (a chain)
	FollowUp                                  string   // the task whose conversation it continues
}

// Submit writes the tasks as files in the rig's folder (outside the spool)
// and drops them all with one `spoolgate submit`.
func (r *Rig) Submit(tasks ...Task) {
	r.T.Helper()
	src := filepath.Join(r.Dir, "drops")
	if err := os.MkdirAll(src, 0o700); err != nil {
		r.T.Fatal(err)
	}
	args := []string{"submit"}
	for _, tk := range tasks {
		t := taskfile.Task{TaskID: tk.ID, Model: tk.Model, Prompt: tk.Prompt, Content: tk.Content, Output: tk.Output, Batch: tk.Batch, After: tk.After, FollowUp: tk.FollowUp}
		data, err := t.Encode()
		if err != nil {
			r.T.Fatal(err)
		}
		p := filepath.Join(src, tk.ID+".yaml")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			r.T.Fatal(err)
		}
		args = append(args, p)
	}
	out := r.CLI(args...)
	for _, tk := range tasks {
		if !strings.Contains(out, tk.ID) {
			r.T.Fatalf("submit did not print %s: %q", tk.ID, out)
		}
	}
}

// Read decodes the task file in lane k, folder dir, or returns nil.
func (r *Rig) Read(k taskfile.Kind, dir, id string) *taskfile.Task {
	data, err := os.ReadFile(r.L.TaskPath(k, dir, id))
	if err != nil {
		return nil
	}
	t, err := taskfile.DecodeTask(data)
	if err != nil {
		r.T.Fatalf("task %s in %s/%s: %v\n%s", id, k, dir, err, data)
	}
	return t
}

// Final waits until task id is in done/, failed/ or canceled/ of lane k
// and returns it; it wakes at each event in those folders.
func (r *Rig) Final(k taskfile.Kind, id string, within time.Duration) *taskfile.Task {
	r.T.Helper()
	var t *taskfile.Task
	dirs := []string{r.L.Lane(k, taskfile.DirDone), r.L.Lane(k, taskfile.DirFailed), r.L.Lane(k, taskfile.DirCanceled)}
	testkit.WaitFS(r.T, "task "+id+" to finish", within, dirs, func() bool {
		switch dir := r.L.Locate(k, id); dir {
		case taskfile.DirDone, taskfile.DirFailed, taskfile.DirCanceled:
			t = r.Read(k, dir, id)
			return t != nil
		}
		return false
	})
	return t
}

// Running waits until task id is in running/ with cond true and returns
// it; it wakes at each event in running/ (every heartbeat is one).
func (r *Rig) Running(k taskfile.Kind, id string, within time.Duration, cond func(*taskfile.Task) bool) *taskfile.Task {
	r.T.Helper()
	var t *taskfile.Task
	testkit.WaitFS(r.T, "task "+id+" running", within, []string{r.L.Lane(k, taskfile.DirRunning)}, func() bool {
		t = r.Read(k, taskfile.DirRunning, id)
		return t != nil && t.State == taskfile.StateRunning && cond(t)
	})
	return t
}

// TaskLog is the task's own log file.
func (r *Rig) TaskLog(k taskfile.Kind, id string) string {
	b, _ := os.ReadFile(r.L.LogPath(k, id))
	return string(b)
}
