//go:build unix

package spool

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// recoverFile writes data as lane api's dir/name, as a crash or another
// daemon would have left it.
func recoverFile(t *testing.T, s *Store, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(s.Layout.Lane(taskfile.KindAPI, dir), name)
	if err := os.WriteFile(p, []byte(data), 0o640); err != nil {
		t.Fatal(err)
	}
	return p
}

// taskYAML is a task file of lane api in state st, as the daemon writes
// it: sealed (an unsealed record's daemon-written fields, its state among
// them, count for nothing).
func taskYAML(t *testing.T, s *Store, id string, st taskfile.State) string {
	t.Helper()
	tk := taskfile.Task{TaskID: id, ModelKind: taskfile.KindAPI, Model: "fast", Content: "x", State: st, SubmittedAt: time.Now().UTC()}
	data, err := s.EncodeTask(taskfile.KindAPI, &tk)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Recover after a crash: a normalized pending task is indexed; one not
// yet normalized (another daemon's intake between its move and rewrite)
// is left out and untouched; an unreadable one goes to failed/ with its
// reason; a final folder's task whose state disagrees with the folder
// takes the folder's state; a rejected drop in failed/ stays as it came.
func TestRecover(t *testing.T) {
	s := newTestStore(t)
	accept(t, s, "ok")
	half := recoverFile(t, s, taskfile.DirPending, "half.yaml", "model: fast\ncontent: x\n")
	recoverFile(t, s, taskfile.DirPending, "junk.yaml", "content: [oops\n")
	recoverFile(t, s, taskfile.DirFailed, "f.yaml", taskYAML(t, s, "f", taskfile.StateRunning))
	recoverFile(t, s, taskfile.DirCanceled, "c.yaml", taskYAML(t, s, "c", taskfile.StatePending))
	drop := recoverFile(t, s, taskfile.DirFailed, "r.yaml", "model: fast\n")
	recoverFile(t, s, taskfile.DirFailed, "r.error", "content: missing\n")

	got, err := Recover(s, func(tk *taskfile.Task) string { return tk.TaskID })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ok"}; !slices.Equal(got[taskfile.KindAPI], want) {
		t.Errorf("pending index %v, want %v", got[taskfile.KindAPI], want)
	}
	if len(got[taskfile.KindWeb]) != 0 {
		t.Errorf("web index %v, want none", got[taskfile.KindWeb])
	}
	if b, _ := os.ReadFile(half); string(b) != "model: fast\ncontent: x\n" {
		t.Errorf("a pending file not yet normalized was rewritten: %q", b)
	}
	if _, err := os.Stat(s.Layout.TaskPath(taskfile.KindAPI, taskfile.DirPending, "junk")); !os.IsNotExist(err) {
		t.Errorf("the unreadable pending file is still in pending/: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(s.Layout.Lane(taskfile.KindAPI, taskfile.DirFailed), "junk.error")); err != nil || len(b) == 0 {
		t.Errorf("the unreadable pending file has no reason in failed/: %q %v", b, err)
	}
	if f := mustRead(t, s, taskfile.DirFailed, "f"); f.State != taskfile.StateFailed || f.FinishedAt.IsZero() {
		t.Errorf("failed/f: state %s finishedAt %v, want failed with a finish time", f.State, f.FinishedAt)
	}
	if c := mustRead(t, s, taskfile.DirCanceled, "c"); c.State != taskfile.StateCanceled || c.ErrorClass != taskfile.ClassCanceled {
		t.Errorf("canceled/c: state %s class %s, want canceled, canceled", c.State, c.ErrorClass)
	}
	if b, _ := os.ReadFile(drop); string(b) != "model: fast\n" {
		t.Errorf("a rejected drop was rewritten: %q", b)
	}
}

// MergePending takes in what reached pending/ without this daemon: it
// skips what the index has, leaves a file not yet normalized alone for the
// pending grace (another daemon's intake may be between its move and its
// rewrite), and normalizes it once it has stayed so.
func TestMergePending(t *testing.T) {
	s := newTestStore(t)
	accept(t, s, "ok")
	accept(t, s, "theirs")
	half := recoverFile(t, s, taskfile.DirPending, "half.yaml", "model: fast\ncontent: x\n")
	indexed := func(id string) bool { return id == "ok" }
	ids := func(ts []*taskfile.Task) []string {
		var out []string
		for _, tk := range ts {
			out = append(out, tk.TaskID)
		}
		slices.Sort(out)
		return out
	}

	t0 := time.Now()
	if got := ids(s.MergePending(taskfile.KindAPI, t0, indexed)); !slices.Equal(got, []string{"theirs"}) {
		t.Errorf("first merge: %v, want [theirs] (half is left for the grace)", got)
	}
	if b, _ := os.ReadFile(half); string(b) != "model: fast\ncontent: x\n" {
		t.Errorf("merged before the grace: %q", b)
	}
	later := t0.Add(s.Cfg.Timing().PendingGrace)
	indexed = func(id string) bool { return id == "ok" || id == "theirs" }
	got := s.MergePending(taskfile.KindAPI, later, indexed)
	if len(got) != 1 || got[0].TaskID != "half" || got[0].State != taskfile.StatePending || got[0].SubmittedAt.IsZero() {
		t.Fatalf("merge after the grace: %+v, want half normalized", got)
	}
	if h := mustRead(t, s, taskfile.DirPending, "half"); h.TaskID != "half" || h.ModelKind != taskfile.KindAPI || h.State != taskfile.StatePending {
		t.Errorf("pending/half after the merge: %+v", h)
	}
}
