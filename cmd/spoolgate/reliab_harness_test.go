// The reliability suite drives POSIX signals, mounts and fifos.

//go:build unix

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/seal"
	"github.com/spoolgate/spoolgate/lanes/lanestest"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The reliability suite (issue 8) starts the real daemon, `spoolgate run`,
// as a subprocess: the test binary itself, found on PATH under the name
// spoolgate thanks to testscript.Main in TestMain, with SPOOLGATE_FAKE=1 so
// both lanes run the lanestest fakes (an exclusive chat session, an API
// quota). Each call of a fake is traced (start/end lines with a unix-nano
// time), so the tests can check from outside, across kills, that the web
// lane never overlapped and that each task ran as often as it should.
//
// Figures go to the test log on lines that start with "reliability:", which
// `make reliability` keeps.

// rigOpts shapes one test spool and its config.
type rigOpts struct {
	Spool      string // default <tmp>/spool
	Settle     time.Duration
	Rescan     time.Duration
	Poll       bool
	StaleAfter time.Duration
	MaxRetries int
	HTTP       string // default "off"
	APIConc    int
	Accounts   []string // web accounts of site chat: one session each
	OwnKey     bool     // the daemon creates its own installation key (another installation)
	Extra      string   // more config, appended as it is (top-level keys)
}

// sharedKey is the installation key of every rig of the test binary.
var sharedKey = seal.New()

// writeSharedKey puts the shared installation key at p, once.
func writeSharedKey(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Stat(p); err == nil {
		return
	}
	if err := sharedKey.Write(p); err != nil {
		t.Fatal(err)
	}
}

// rig is one spool with its config file; daemons of a test share it.
type rig struct {
	t     *testing.T
	dir   string
	spool string
	opts  rigOpts
}

func newRig(t *testing.T, o rigOpts) *rig {
	t.Helper()
	dir := t.TempDir()
	if o.Spool == "" {
		o.Spool = filepath.Join(dir, "spool")
	}
	if o.Settle == 0 {
		o.Settle = 100 * time.Millisecond
	}
	if o.Rescan == 0 {
		o.Rescan = 200 * time.Millisecond
	}
	if o.StaleAfter == 0 {
		o.StaleAfter = 500 * time.Millisecond
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 2
	}
	if o.HTTP == "" {
		o.HTTP = "off"
	}
	if o.APIConc == 0 {
		o.APIConc = 3
	}
	return &rig{t: t, dir: dir, spool: o.Spool, opts: o}
}

// config writes a config for one daemon (its host and its own profiles
// folder: two daemons that share a profiles folder share the web lock).
func (r *rig) config(name, host, profiles string) string {
	r.t.Helper()
	o := r.opts
	// The fakes' models: both executors are lanestest fakes (SPOOLGATE_FAKE).
	tail := `models:
  - {name: fast, kind: api, baseURL: "http://127.0.0.1:9/v1"}
  - {name: chat, kind: web, site: chat}
sites:
  chat: {url: "http://127.0.0.1:9/", input: textarea, send: button, answer: .answer}
`
	if len(o.Accounts) > 0 {
		tail += "accounts:\n"
		for _, a := range o.Accounts {
			tail += "  " + a + ": {site: chat}\n"
		}
	}
	c := daemonConfig{Spool: o.Spool, Host: host, Settle: o.Settle, Rescan: o.Rescan, Poll: o.Poll,
		Heartbeat: 50 * time.Millisecond, StaleAfter: o.StaleAfter, MaxRetries: o.MaxRetries,
		RetryBackoff: 10 * time.Millisecond, Grace: 2 * time.Second, HTTP: o.HTTP, APIConc: o.APIConc,
		Profiles: profiles, Tail: tail + o.Extra}
	p := filepath.Join(r.dir, name+".yaml")
	c.write(r.t, p)
	// One installation: every host of the spool has its key (README,
	// "Who may write what"), copied as an operator would.
	if !r.opts.OwnKey {
		writeSharedKey(r.t, filepath.Join(r.dir, seal.FileName))
	}
	return p
}

// start runs a daemon of fakes on the rig. It is killed (SIGKILL) at
// cleanup if the test has not stopped it.
func (r *rig) start(o daemonOpts) *daemon {
	r.t.Helper()
	if o.Host == "" {
		o.Host = "h1"
	}
	if o.Profiles == "" {
		o.Profiles = filepath.Join(r.dir, "profiles")
	}
	if o.Trace == "" {
		o.Trace = filepath.Join(r.dir, "trace-"+o.Name)
	}
	if err := os.MkdirAll(o.Trace, 0o700); err != nil {
		r.t.Fatal(err)
	}
	cfg := r.config(o.Name, o.Host, o.Profiles)
	logPath := filepath.Join(r.dir, o.Name+".log")
	lf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		r.t.Fatal(err)
	}
	defer lf.Close()
	env := append(os.Environ(), "SPOOLGATE_FAKE=1", "SPOOLGATE_FAKE_TRACE="+o.Trace)
	if o.Scale != 0 {
		env = append(env, "SPOOLGATE_FAKE_SCALE="+strconv.FormatFloat(o.Scale, 'f', -1, 64))
	}
	d := launch(r.t, o.Name, r.dir, cfg, lf, append(env, o.Env...), false)
	d.trace = o.Trace
	return d
}

// SIGSTOP freezes a daemon as a long GC pause, a suspended VM or a stalled
// NFS client would; SIGCONT thaws it.
var stopSignal, contSignal = syscall.SIGSTOP, syscall.SIGCONT

// taskYAML renders a drop.
func taskYAML(id, model, content string, extra ...string) []byte {
	var b bytes.Buffer
	if id != "" {
		fmt.Fprintf(&b, "taskId: %s\n", id)
	}
	fmt.Fprintf(&b, "model: %s\ncontent: %q\n", model, content)
	for _, e := range extra {
		b.WriteString(e + "\n")
	}
	return b.Bytes()
}

// dropFile drops data as dir/name the way the contract asks: a dot-temp
// file, then a rename.
func dropFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".part")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// finalDirs are the folders a task ends in.
var finalDirs = []string{taskfile.DirDone, taskfile.DirFailed, taskfile.DirCanceled}

// audit is what a spool holds once the dust settled.
type audit struct {
	where     map[string][]string // taskId → "lane/folder" of each file
	tasks     map[string]*taskfile.Task
	states    map[string]int // final folder → count
	temps     []string
	leftovers []string // files in incoming/, pending/, running/
	rejected  []string // NAME.error files
	broken    []string // files that did not parse
}

// auditSpool reads every task folder of both lanes.
func auditSpool(t *testing.T, root string) *audit {
	t.Helper()
	l := spool.NewLayout(root)
	a := &audit{where: map[string][]string{}, tasks: map[string]*taskfile.Task{}, states: map[string]int{}}
	scan := func(dir string, fn func(name, path string)) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("audit: %v", err)
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if fsx.IsOwnTemp(e.Name()) {
				a.temps = append(a.temps, p)
				continue
			}
			fn(e.Name(), p)
		}
	}
	scan(l.Incoming(), func(name, p string) { a.leftovers = append(a.leftovers, p) })
	scan(l.Output(), func(string, string) {})
	for _, k := range taskfile.Kinds {
		for _, d := range []string{taskfile.DirIncoming, taskfile.DirPending, taskfile.DirRunning, taskfile.DirDone, taskfile.DirFailed, taskfile.DirCanceled, taskfile.DirCancel} {
			scan(l.Lane(k, d), func(name, p string) {
				switch {
				case d == taskfile.DirIncoming || d == taskfile.DirPending || d == taskfile.DirRunning || d == taskfile.DirCancel:
					a.leftovers = append(a.leftovers, p)
				case strings.HasSuffix(name, ".error"):
					a.rejected = append(a.rejected, p)
				case strings.HasSuffix(name, ".yaml"):
					id := taskfile.TrimTaskExt(name)
					a.where[id] = append(a.where[id], string(k)+"/"+d)
					tk, err := spool.ReadTaskFile(p)
					if err != nil {
						a.broken = append(a.broken, fmt.Sprintf("%s: %v", p, err))
						return
					}
					if tk.State != taskfile.FolderState[d] || tk.TaskID != id {
						a.broken = append(a.broken, fmt.Sprintf("%s: state %q taskId %q in %s/", p, tk.State, tk.TaskID, d))
					}
					a.tasks[id] = tk
					a.states[d]++
				default:
					a.broken = append(a.broken, p+": unexpected file")
				}
			})
		}
	}
	return a
}

// check fails the test unless each id in ids is exactly one parsed file in
// a final folder, with attempt within bounds, and nothing else is left.
// It returns the number of lost and duplicated tasks (both 0 on success).
func (a *audit) check(t *testing.T, ids []string, maxAttempts int) (lost, dups int) {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
		switch n := len(a.where[id]); {
		case n == 0:
			lost++
			t.Errorf("task %s lost: in no final folder", id)
		case n > 1:
			dups++
			t.Errorf("task %s duplicated: %v", id, a.where[id])
		}
		tk := a.tasks[id]
		if tk == nil {
			continue
		}
		if tk.Attempt > maxAttempts {
			t.Errorf("task %s: attempt %d over maxRetries+1 = %d", id, tk.Attempt, maxAttempts)
		}
		if tk.State == taskfile.StateSuccess && tk.Result != lanestest.Answer(tk.Content) {
			t.Errorf("task %s: result %q, want %q", id, tk.Result, lanestest.Answer(tk.Content))
		}
	}
	for id := range a.where {
		if !want[id] {
			t.Errorf("unexpected task %s in %v", id, a.where[id])
		}
	}
	for _, p := range a.broken {
		t.Errorf("broken task file: %s", p)
	}
	for _, p := range a.temps {
		t.Errorf("temp file left: %s", p)
	}
	for _, p := range a.leftovers {
		t.Errorf("left outside the final folders: %s", p)
	}
	for _, p := range a.rejected {
		b, _ := os.ReadFile(p)
		t.Errorf("unexpected rejection %s: %s", p, b)
	}
	return lost, dups
}

// finalCount counts task files in the final folders of both lanes.
func finalCount(root string) int {
	l := spool.NewLayout(root)
	n := 0
	for _, k := range taskfile.Kinds {
		for _, d := range finalDirs {
			ents, _ := os.ReadDir(l.Lane(k, d))
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".yaml") {
					n++
				}
			}
		}
	}
	return n
}

// call is one traced executor call.
type call struct {
	id         string
	start, end int64 // unix nano; end is the kill time for a call cut short
	cut        bool
	account    string // the web session's account, when the lane has sessions
}

// readTrace parses one trace file; calls still open at the end get end =
// openEnd (the moment their process was killed), or are reported open if
// openEnd is 0.
func readTrace(t *testing.T, path string, openEnd int64) []call {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []call
	open := map[string]int{} // id → index in out
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 3 && len(fs) != 4 {
			continue // a line cut by a kill
		}
		ns, err := strconv.ParseInt(fs[2], 10, 64)
		if err != nil {
			continue
		}
		switch fs[0] {
		case "start":
			open[fs[1]] = len(out)
			c := call{id: fs[1], start: ns, end: -1}
			if len(fs) == 4 {
				c.account = fs[3]
			}
			out = append(out, c)
		case "end":
			if i, ok := open[fs[1]]; ok {
				out[i].end = ns
				delete(open, fs[1])
			}
		}
	}
	for _, i := range open {
		out[i].end, out[i].cut = openEnd, true
		if openEnd == 0 {
			t.Errorf("trace %s: call of %s never ended", path, out[i].id)
		}
	}
	return out
}

// overlaps returns pairs of calls whose intervals intersect.
func overlaps(calls []call) []string {
	c := append([]call(nil), calls...)
	sort.Slice(c, func(i, j int) bool { return c[i].start < c[j].start })
	var out []string
	last := 0 // the call that ends last among those before i
	for i := 1; i < len(c); i++ {
		if c[i].start < c[last].end {
			out = append(out, fmt.Sprintf("%s [%d..%d] overlaps %s [%d..%d]", c[last].id, c[last].start, c[last].end, c[i].id, c[i].start, c[i].end))
		}
		if c[i].end > c[last].end {
			last = i
		}
	}
	return out
}
