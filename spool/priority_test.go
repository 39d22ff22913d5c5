package spool

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestStore_SetPriority(t *testing.T) {
	s := newTestStore(t)
	sub := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tk := &taskfile.Task{TaskID: "t", ModelKind: taskfile.KindAPI, Model: "fast", Batch: "b", Content: "x", State: taskfile.StatePending, Attempt: 1,
		SubmittedAt: sub, NotBefore: sub.Add(time.Minute), Error: "HTTP 503"}
	if err := putTask(s, taskfile.KindAPI, taskfile.DirPending, tk); err != nil {
		t.Fatal(err)
	}
	got, err := s.SetPriority(taskfile.KindAPI, "t", taskfile.PriorityHigh)
	if err != nil {
		t.Fatal(err)
	}
	disk, err := s.Read(taskfile.KindAPI, taskfile.DirPending, "t")
	if err != nil {
		t.Fatal(err)
	}
	want := tk.Clone()
	want.Priority = taskfile.PriorityHigh
	if !sameRecord(disk, want) || !sameRecord(got, want) {
		t.Errorf("on disk %+v, want only the priority changed: %+v", disk, want)
	}
	if _, err := s.SetPriority(taskfile.KindAPI, "t", taskfile.PriorityHigh); err != nil {
		t.Errorf("setting it again: %v", err)
	}
	if _, err := s.SetPriority(taskfile.KindAPI, "t", "urgent"); err == nil || !strings.Contains(err.Error(), "want high, normal or low") {
		t.Errorf("bad level: %v", err)
	}
	// Claimed meanwhile: it is no longer pending, and stays where it is.
	if err := s.move(taskfile.KindAPI, taskfile.DirPending, taskfile.DirRunning, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPriority(taskfile.KindAPI, "t", taskfile.PriorityLow); !errors.Is(err, ErrNotPending) {
		t.Errorf("running task: %v, want ErrNotPending", err)
	}
	if _, err := os.Lstat(s.Layout.TaskPath(taskfile.KindAPI, taskfile.DirPending, "t")); !os.IsNotExist(err) {
		t.Error("SetPriority recreated pending/t")
	}
	if _, err := s.SetPriority(taskfile.KindAPI, "nosuch", taskfile.PriorityLow); !errors.Is(err, ErrNotPending) {
		t.Errorf("no such task: %v", err)
	}
	if err := s.RequestReindex(taskfile.KindAPI, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(s.Layout.PriorityPath(taskfile.KindAPI, "t")); err != nil {
		t.Error(err)
	}
}
