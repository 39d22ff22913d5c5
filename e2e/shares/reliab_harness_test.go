// The reliability suite drives POSIX signals, mounts and fifos.

//go:build unix

package shares

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

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/lanes/lanestest"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

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
