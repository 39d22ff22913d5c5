// The reliability suite drives POSIX signals, mounts and fifos.

//go:build linux

package shares

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// foreignWriter drops src as dst with a tool spoolgate did not write.
type foreignWriter struct {
	name string
	drop func(t *testing.T, src, dst string, data []byte)
}

// runTool runs a copy tool and fails the test on its error.
func runTool(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// pipeCopy runs `cp FIFO dst` and feeds the fifo in chunks at a writer's
// pace (a slow source: the copy writes dst in place as the bytes come).
// The pauses are the source's pace, not synchronization; each is shorter
// than settle, so the file never holds still long enough to be taken half
// written.
func pipeCopy(t *testing.T, dst string, data []byte, chunks int, pause time.Duration) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "source.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("cp", fifo, dst)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until cp opens it
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal(err)
	}
	step := (len(data) + chunks - 1) / chunks
	for off := 0; off < len(data); off += step {
		if off > 0 {
			time.Sleep(pause) // the source's pace
		}
		if _, err := w.Write(data[off:min(off+step, len(data))]); err != nil {
			t.Errorf("write to the fifo: %v", err)
			break
		}
	}
	_ = w.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("cp %s %s: %v: %s", fifo, dst, err, out.String())
	}
}

// foreignTask is a large task whose content is a block scalar: a prefix of
// the file, cut at a line end, is itself a valid task with less content,
// so a drop taken before its writer is done shows as a short content.
func foreignTask(id string, lines int) (yaml []byte, content string) {
	var c strings.Builder
	for i := range lines {
		fmt.Fprintf(&c, "line %05d of %s, the whole content must arrive [[duration=10ms]]\n", i, id)
	}
	content = c.String()
	var b strings.Builder
	fmt.Fprintf(&b, "taskId: %s\nmodel: fast\ncontent: |\n", id)
	for _, l := range strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n") {
		b.WriteString("  " + l)
	}
	b.WriteString("\n")
	return []byte(b.String()), content
}

// TestReliability_ForeignWriters drops tasks into incoming/ with copy tools
// spoolgate did not write, as users do: rsync (a dot-temp, then a rename),
// rsync --inplace and cp (the file written in place, its mtime set to the
// source's old one by rsync), and cp from a slow pipe. Each task must run
// exactly once, with its whole content.
func TestReliability_ForeignWriters(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("rsync"); err != nil {
		skipOrFail(t, "rsync is not installed (Debian: apt-get install rsync)")
	}
	if _, err := exec.LookPath("cp"); err != nil {
		skipOrFail(t, "cp is not installed")
	}
	r := rig.New(t, rig.Opts{Fake: true, Settle: 300 * time.Millisecond})
	d := r.StartHost(rig.DaemonOpts{Name: "foreign"})
	d.WaitReady()
	incoming := spool.NewLayout(r.Spool).Incoming()
	old := time.Now().Add(-time.Hour) // copy engines carry the source's mtime
	writers := []foreignWriter{
		{"rsync", func(t *testing.T, src, dst string, _ []byte) { runTool(t, "rsync", src, dst) }},
		{"rsync --inplace", func(t *testing.T, src, dst string, _ []byte) { runTool(t, "rsync", "--inplace", "-t", src, dst) }},
		{"cp", func(t *testing.T, src, dst string, _ []byte) { runTool(t, "cp", src, dst) }},
		{"cp from a slow pipe", func(t *testing.T, _, dst string, data []byte) { pipeCopy(t, dst, data, 8, 60*time.Millisecond) }},
	}
	perTool := 6
	if !testkit.Reliability() {
		perTool = 3
	}
	stage := t.TempDir()
	want := map[string]string{} // id → content
	tool := map[string]string{} // id → writer name
	var ids []string
	for wi, w := range writers {
		for i := range perTool {
			id := fmt.Sprintf("foreign-%d-%d", wi, i)
			// 3000 lines: about 200 KiB, more than one write of each tool.
			data, content := foreignTask(id, 3000)
			src := filepath.Join(stage, id+".yaml")
			if err := os.WriteFile(src, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(src, old, old); err != nil {
				t.Fatal(err)
			}
			w.drop(t, src, filepath.Join(incoming, id+".yaml"), data)
			ids, want[id], tool[id] = append(ids, id), content, w.name
		}
	}
	testkit.Wait(t, "every task final", 60*time.Second, func() bool {
		d.MustBeAlive()
		return finalCount(r.Spool) >= len(ids)
	})

	d.Stop()
	au := auditSpool(t, r.Spool)
	au.check(t, ids, 1)
	runs := map[string]int{}
	for _, c := range readTrace(t, filepath.Join(d.Trace, "api.trace"), 0) {
		runs[c.id]++
	}
	good := map[string]int{}
	for _, id := range ids {
		tk := au.tasks[id]
		switch {
		case runs[id] != 1:
			t.Errorf("%s: task %s ran %d times, want exactly once", tool[id], id, runs[id])
		case tk == nil:
			// lost: reported by check
		case tk.State != taskfile.StateSuccess:
			t.Errorf("%s: task %s ended %s: %s", tool[id], id, tk.State, tk.Error)
		case tk.Content != want[id]:
			t.Errorf("%s: task %s ran with %d of %d bytes of its content", tool[id], id, len(tk.Content), len(want[id]))
		default:
			good[tool[id]]++
		}
	}
	var figs []string
	for _, w := range writers {
		figs = append(figs, fmt.Sprintf("%s %d drops, %d ran once whole", w.name, perTool, good[w.name]))
	}
	t.Logf("reliability: foreign writers (settle %s): %s", r.Opts.Settle, strings.Join(figs, "; "))
}
