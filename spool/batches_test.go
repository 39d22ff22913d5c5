package spool

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// batchSpool writes task files into a fresh spool: (lane, folder, id,
// batch, finishedAt offset in seconds from base).
func batchSpool(t *testing.T, files [][5]any) (Layout, time.Time) {
	t.Helper()
	l := NewLayout(t.TempDir())
	if err := l.Create(); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, f := range files {
		k, dir, id, batch := f[0].(taskfile.Kind), f[1].(string), f[2].(string), f[3].(string)
		tk := taskfile.Task{TaskID: id, ModelKind: k, Model: "m", Batch: batch, Content: "x", State: taskfile.FolderState[dir],
			SubmittedAt: base.Add(-time.Hour)}
		if taskfile.FolderState[dir].Final() {
			tk.FinishedAt = base.Add(time.Duration(f[4].(int)) * time.Second)
		}
		data, err := tk.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(l.TaskPath(k, dir, id), data, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return l, base
}

func TestBatchScanner_Scan(t *testing.T) {
	l, base := batchSpool(t, [][5]any{
		{taskfile.KindAPI, taskfile.DirDone, "a1", "done-b", 5},
		{taskfile.KindWeb, taskfile.DirDone, "w1", "done-b", 9},
		{taskfile.KindAPI, taskfile.DirFailed, "a2", "done-b", 7},
		{taskfile.KindAPI, taskfile.DirFailed, "a0", "done-b", 3},
		{taskfile.KindAPI, taskfile.DirCanceled, "a3", "done-b", 1},
		{taskfile.KindAPI, taskfile.DirDone, "b1", "open-b", 2},
		{taskfile.KindWeb, taskfile.DirRunning, "b2", "open-b", 0},
		{taskfile.KindAPI, taskfile.DirPending, "c1", "pending-b", 0},
		{taskfile.KindAPI, taskfile.DirDone, "d1", "drop-b", 4},
		{taskfile.KindAPI, taskfile.DirDone, "n1", "", 4},
	})
	// A rejected drop in failed/ is not a task; a drop waiting in a drop
	// box keeps its batch open.
	failed := l.Lane(taskfile.KindAPI, taskfile.DirFailed)
	os.WriteFile(filepath.Join(failed, "junk.yaml"), []byte("taskId: junk\nmodel: m\nbatch: done-b\ncontent: x\n"), 0o640)
	os.WriteFile(filepath.Join(failed, "junk.error"), []byte("model: unknown\n"), 0o640)
	os.WriteFile(filepath.Join(l.Incoming(), "late.yaml"), []byte("model: m\nbatch: drop-b\ncontent: x\n"), 0o640)

	s := NewBatchScanner(l)
	for round := 0; round < 2; round++ { // the second round reads from the cache
		got, err := s.Scan()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4 {
			t.Fatalf("round %d: %d batches, want 4: %v", round, len(got), got)
		}
		d := got["done-b"]
		if d.Success != 2 || d.Failed != 2 || d.Canceled != 1 || d.Total() != 5 || !d.Finished() {
			t.Errorf("done-b: %+v", d)
		}
		if !reflect.DeepEqual(d.FailedIDs, []string{"a0", "a2"}) {
			t.Errorf("done-b failed ids %v, want oldest failure first", d.FailedIDs)
		}
		if !d.LastFinishedAt.Equal(base.Add(9*time.Second)) || !d.FirstSubmittedAt.Equal(base.Add(-time.Hour)) {
			t.Errorf("done-b times %v %v", d.FirstSubmittedAt, d.LastFinishedAt)
		}
		if o := got["open-b"]; o.Running != 1 || o.Success != 1 || o.Finished() {
			t.Errorf("open-b: %+v", o)
		}
		if p := got["pending-b"]; p.Pending != 1 || p.Finished() {
			t.Errorf("pending-b: %+v", p)
		}
		if dr := got["drop-b"]; dr.Incoming != 1 || dr.Success != 1 || dr.Finished() {
			t.Errorf("drop-b: %+v", dr)
		}
	}
	// The drop is taken in and finishes: the batch is finished.
	os.Remove(filepath.Join(l.Incoming(), "late.yaml"))
	got, err := s.Scan()
	if err != nil {
		t.Fatal(err)
	}
	if dr := got["drop-b"]; !dr.Finished() || dr.Total() != 1 {
		t.Errorf("drop-b after intake: %+v", dr)
	}
}
