package spool

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestLayout_Locate(t *testing.T) {
	L := NewLayout(t.TempDir())
	k := taskfile.KindAPI
	put := func(dir, id string) {
		t.Helper()
		p := L.TaskPath(k, dir, id)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("taskId: "+id+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(taskfile.DirPending, "p")
	put(taskfile.DirDone, "d")
	put(taskfile.DirRunning, "two") // after a crash, in two folders: the first of TaskDirs
	put(taskfile.DirDone, "two")
	put(taskfile.DirDone, "target")
	if err := os.MkdirAll(L.Lane(k, taskfile.DirFailed), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(L.TaskPath(k, taskfile.DirDone, "target"), L.TaskPath(k, taskfile.DirFailed, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(L.TaskPath(k, taskfile.DirCanceled, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ id, want string }{
		{"p", taskfile.DirPending},
		{"d", taskfile.DirDone},
		{"two", taskfile.DirRunning},
		{"link", ""},   // a symlink is not a task file
		{"folder", ""}, // nor a folder named like one
		{"none", ""},
	} {
		if got := L.Locate(k, tc.id); got != tc.want {
			t.Errorf("Locate(%s) = %q, want %q", tc.id, got, tc.want)
		}
	}
	// An archive month has the final folders only.
	month := filepath.Join(L.Root, "archive", "2026-11")
	if err := os.MkdirAll(filepath.Join(month, taskfile.DirFailed), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(month, taskfile.DirFailed, "old.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := LocateIn(month, taskfile.FinalDirs, "old"); got != taskfile.DirFailed {
		t.Errorf("LocateIn(month, old) = %q, want failed", got)
	}
	if got := LocateIn(month, taskfile.FinalDirs, "p"); got != "" {
		t.Errorf("LocateIn(month, p) = %q, want none", got)
	}
}
