package spool

import (
	"os"
	"testing"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestTaskLog_Write guards the task log's life: its file is opened once
// and kept until Close (a line written after the file was moved away
// lands in the moved file, the one that was open), Close may be called
// twice, and a line after Close still lands, at the log's own path.
func TestTaskLog_Write(t *testing.T) {
	s := newTestStore(t)
	p := s.Layout.LogPath(taskfile.KindAPI, "t")
	w := s.TaskLog(taskfile.KindAPI, "t")
	w.Write([]byte("one\n"))
	if err := os.Rename(p, p+".moved"); err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("two\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	w.Write([]byte("three\n"))
	for _, c := range []struct{ path, want string }{{p + ".moved", "one\ntwo\n"}, {p, "three\n"}} {
		if b, _ := os.ReadFile(c.path); string(b) != c.want {
			t.Errorf("%s = %q, want %q", c.path, b, c.want)
		}
	}
}
