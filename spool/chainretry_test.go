package spool

import (
	"os"
	"testing"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Retrying a chain's parent re-queues the children its log names as
// failed for it, and theirs, when their records say so; a child named by
// a planted line whose record does not is left; retrying the re-queued
// child too (a batch's retry names both) is no error.
func TestStore_RetryChildren(t *testing.T) {
	s := newTestStore(t)
	k := taskfile.KindAPI
	put := func(tk *taskfile.Task) {
		t.Helper()
		tk.Model, tk.Content, tk.State, tk.ModelKind = "fast", "x", taskfile.StateFailed, k
		data, err := s.EncodeTask(k, tk)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.Layout.TaskPath(k, taskfile.DirFailed, tk.TaskID), data, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	put(&taskfile.Task{TaskID: "p", ErrorClass: taskfile.ClassTransient})
	put(&taskfile.Task{TaskID: "c", After: []string{"p"}, ErrorClass: taskfile.ClassParent})
	put(&taskfile.Task{TaskID: "g", FollowUp: "c", ErrorClass: taskfile.ClassParent})
	put(&taskfile.Task{TaskID: "other", After: []string{"p"}, ErrorClass: taskfile.ClassTransient})
	for _, l := range [][2]string{{"p", "api/c"}, {"c", "api/g"}, {"p", "api/other"}} {
		if err := s.AppendLog(k, l[0], ChildFailedLog+l[1]+" failed for this task"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Retry(k, "p"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"p": "", "c": "", "g": "", "other": taskfile.DirFailed} {
		if got := s.Layout.Locate(k, id); got != want {
			t.Errorf("%s is in %q, want %q", id, got, want)
		}
	}
	if from, err := s.Retry(k, "c"); err != nil || from != taskfile.DirIncoming {
		t.Errorf("retry of the re-queued child: %q, %v; want incoming, no error", from, err)
	}
}
