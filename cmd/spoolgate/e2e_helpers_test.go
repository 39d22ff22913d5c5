//go:build unix

package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/seal"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The end-to-end acceptance tests (issues 4 and 5) run the real daemon,
// `spoolgate run`, as a subprocess with its REAL executors: apimodel
// against examples/apistand and a real headless Chromium against
// examples/chatstand. The binary is this test binary, found on PATH as
// `spoolgate` thanks to testscript.Main in TestMain; SPOOLGATE_FAKE is
// removed from its environment so no fake is used. Every helper here is
// named e2e* so it cannot clash with the other suites of this package.

// e2eOpts shapes one test's config. Zero fields take the small periods the
// suite runs with.
type e2eOpts struct {
	MaxRetries  int           // default 2; set Retries0 for none
	Retries0    bool          // maxRetries: 0
	TaskTimeout time.Duration // web.taskTimeout, default 30s
	APIConc     int           // 0: the key is left out (the default, 3)
	Heartbeat   time.Duration // default 200ms
	StaleAfter  time.Duration // default 1s
	Grace       time.Duration // shutdownGrace, default 5s
	Tail        string        // models: and sites: sections (YAML)
	HTTP        string        // the status page's address; default "off"
}

// e2eRig is one test's spool, config file and the processes it started.
type e2eRig struct {
	t        *testing.T
	dir      string // the test's own temp folder; the spool is dir/spool
	cfgPath  string
	cfg      *config.Config
	L        spool.Layout
	profiles string
	env      []string  // extra environment for every spoolgate process
	key      *seal.Key // the installation's key beside the config
}

// e2eNewRig writes the config and parses it back as the daemon will.
func e2eNewRig(t *testing.T, o e2eOpts, env ...string) *e2eRig {
	t.Helper()
	dir := t.TempDir()
	if o.MaxRetries == 0 && !o.Retries0 {
		o.MaxRetries = 2
	}
	if o.TaskTimeout == 0 {
		o.TaskTimeout = 30 * time.Second
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = 200 * time.Millisecond
	}
	if o.StaleAfter == 0 {
		o.StaleAfter = time.Second
	}
	if o.Grace == 0 {
		o.Grace = 5 * time.Second
	}
	if o.HTTP == "" {
		o.HTTP = "off"
	}
	r := &e2eRig{t: t, dir: dir, profiles: filepath.Join(dir, "profiles"), env: env}
	r.cfgPath = filepath.Join(dir, "spoolgate.yaml")
	dc := daemonConfig{Spool: filepath.Join(dir, "spool"), Host: "e2e", Settle: 100 * time.Millisecond, Rescan: 200 * time.Millisecond,
		Heartbeat: o.Heartbeat, StaleAfter: o.StaleAfter, MaxRetries: o.MaxRetries, RetryBackoff: 50 * time.Millisecond,
		Grace: o.Grace, HTTP: o.HTTP, APIConc: o.APIConc, Profiles: r.profiles, Instance: "e2e", TaskTimeout: o.TaskTimeout, Tail: o.Tail}
	cfg := dc.write(t, r.cfgPath)
	c, err := config.LoadConfig(r.cfgPath)
	if err != nil {
		t.Fatalf("config: %v\n%s", err, cfg)
	}
	r.cfg = c
	r.L = spool.NewLayout(c.Spool)
	// The installation's key beside the config, as the daemon would create
	// it; the test's own Store reads with it (r.store): what the daemon
	// seals (holds, leases, markers) the test reads as genuine.
	r.key = seal.New()
	if err := r.key.Write(seal.PathFor(r.cfgPath)); err != nil {
		t.Fatal(err)
	}
	return r
}

// store is a Store over the rig's spool with the installation's key, as
// a command of this installation opens it.
func (r *e2eRig) store() *spool.Store {
	st := spool.NewStore(r.cfg, nil)
	st.Seal = r.key
	return st
}

// e2eEnviron is this process's environment without SPOOLGATE_FAKE*, so the
// daemon runs its real executors, plus extra.
func e2eEnviron(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SPOOLGATE_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// cli runs one short spoolgate command on the rig's config and returns its
// stdout; a non-zero exit fails the test.
func (r *e2eRig) cli(args ...string) string {
	r.t.Helper()
	code, out, errOut := r.e2eRun(args...)
	if code != 0 {
		r.t.Fatalf("spoolgate %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// e2eRun runs one spoolgate command on the rig's config and returns its
// exit status, stdout and stderr.
func (r *e2eRig) e2eRun(args ...string) (int, string, string) {
	r.t.Helper()
	cmd := exec.Command("spoolgate", append(args, "--config", r.cfgPath)...)
	cmd.Dir = r.dir
	cmd.Env = e2eEnviron(r.env)
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
func (r *e2eRig) submit(tasks ...e2eTask) {
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

// start runs the daemon with its real executors; its output goes to
// daemon.stderr beside the spool, truncated at each start. At cleanup a
// daemon still running is stopped with SIGTERM (then SIGKILL).
func (r *e2eRig) start() *daemon {
	r.t.Helper()
	f, err := os.Create(filepath.Join(r.dir, "daemon.stderr"))
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	return launch(r.t, "e2e", r.dir, r.cfgPath, f, e2eEnviron(r.env), true)
}

// read decodes the task file in lane k, folder dir, or returns nil.
func (r *e2eRig) read(k taskfile.Kind, dir, id string) *taskfile.Task {
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
func (r *e2eRig) final(k taskfile.Kind, id string, within time.Duration) *taskfile.Task {
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
func (r *e2eRig) running(k taskfile.Kind, id string, within time.Duration, cond func(*taskfile.Task) bool) *taskfile.Task {
	r.t.Helper()
	var t *taskfile.Task
	testkit.WaitFS(r.t, "task "+id+" running", within, []string{r.L.Lane(k, taskfile.DirRunning)}, func() bool {
		t = r.read(k, taskfile.DirRunning, id)
		return t != nil && t.State == taskfile.StateRunning && cond(t)
	})
	return t
}

// taskLog is the task's own log file.
func (r *e2eRig) taskLog(k taskfile.Kind, id string) string {
	b, _ := os.ReadFile(r.L.LogPath(k, id))
	return string(b)
}

// e2ePgrep lists the pids whose command line contains s, as an operator's
// `pgrep -f` would, leaving out pgrep itself.
func e2ePgrep(t *testing.T, s string) []string {
	t.Helper()
	out, err := exec.Command("pgrep", "-f", s).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return nil
		}
		t.Fatalf("pgrep -f %s: %v", s, err)
	}
	return strings.Fields(string(out))
}

// e2eNoProcs waits (up to 5 s: a process just killed takes a moment to be
// reaped) until no process names profile, and fails naming the ones left.
func e2eNoProcs(t *testing.T, profile string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := e2ePgrep(t, profile)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range pids {
				cmd, _ := os.ReadFile("/proc/" + p + "/cmdline")
				stat, _ := os.ReadFile("/proc/" + p + "/stat")
				t.Errorf("process %s on the profile remains: %s (stat %s)", p, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}), stat)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// e2eFilesContaining walks root and returns every regular file whose bytes
// contain needle.
func e2eFilesContaining(t *testing.T, root, needle string) (hits []string, n int) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		n++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(needle)) {
			hits = append(hits, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	slices.Sort(hits)
	return hits, n
}
