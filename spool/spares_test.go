//go:build linux

package spool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestStore_SparesRecycle: a daemon's rewrites reuse the file the last
// one swapped out, so a rewrite allocates no inode (the recently_deleted
// walk of ext4 without a journal); without KeepSpares, and after
// DropSpares, no temp file is left.
func TestStore_SparesRecycle(t *testing.T) {
	for _, keep := range []bool{true, false} {
		name := map[bool]string{true: "kept", false: "not kept"}[keep]
		t.Run(name, func(t *testing.T) {
			s := newTestStore(t)
			if keep {
				s.KeepSpares()
			}
			k := taskfile.KindAPI
			task := &taskfile.Task{TaskID: "t1", Model: "fast", Content: "x", State: taskfile.StateRunning}
			path := s.Layout.TaskPath(k, taskfile.DirRunning, "t1")
			data, _ := task.Encode()
			if err := s.WriteFileAtomic(path, data); err != nil {
				t.Fatal(err)
			}
			running := s.Layout.Lane(k, taskfile.DirRunning)
			var spareBefore uint64
			for i := range 6 {
				before := inodeOf(t, path)
				task.Content = strings.Repeat("y", i+1)
				if _, err := s.rewrite(k, taskfile.DirRunning, task); err != nil {
					t.Fatal(err)
				}
				got, err := s.Read(k, taskfile.DirRunning, "t1")
				if err != nil || got.Content != task.Content {
					t.Fatalf("rewrite %d: read %v, %v", i, got, err)
				}
				sp := testkit.OwnTemps(t, running)
				if !keep {
					if len(sp) != 0 {
						t.Fatalf("rewrite %d: temp files left: %v", i, sp)
					}
					continue
				}
				// The version swapped out stays as the one spare, and
				// the next rewrite writes into it.
				if len(sp) != 1 || inodeOf(t, filepath.Join(running, sp[0])) != before {
					t.Fatalf("rewrite %d: spares %v, want the old version's file", i, sp)
				}
				if i > 0 && inodeOf(t, path) != spareBefore {
					t.Fatalf("rewrite %d: a new file, not the spare", i)
				}
				spareBefore = before
			}
			if keep {
				if n := s.CleanTemps(); n != 0 || len(testkit.OwnTemps(t, running)) != 1 {
					t.Fatalf("CleanTemps removed %d of our spares", n)
				}
				s.DropSpares()
			}
			if sp := testkit.OwnTemps(t, running); len(sp) != 0 {
				t.Fatalf("temp files left: %v", sp)
			}
		})
	}
}

// inodeOf is path's inode number (where the OS has them).
func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	_, _, ino := fsx.SysStamp(fi)
	return ino
}
