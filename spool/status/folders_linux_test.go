package status

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestSnapshotter_ByInode: a finished folder whose mtime moved is listed
// by names and inodes: a file renamed over (a new inode) is read again, a
// new one read, a gone one dropped; a file rewritten in place (its inode
// kept) keeps its summary until the folder's files are stat'ed again,
// statAfter later.
func TestSnapshotter_ByInode(t *testing.T) {
	cfg := newSpool(t)
	L := spool.NewLayout(cfg.Spool)
	done := L.Lane(taskfile.KindAPI, taskfile.DirDone)
	api := taskfile.KindAPI
	put(t, cfg, api, taskfile.DirDone, taskfile.Task{TaskID: "a", Model: "writer", Batch: "first"})
	put(t, cfg, api, taskfile.DirDone, taskfile.Task{TaskID: "b", Model: "writer", Batch: "first"})
	wall := time.Now()
	moveMtime := func(ago time.Duration) {
		t.Helper()
		if err := os.Chtimes(done, wall.Add(-ago), wall.Add(-ago)); err != nil {
			t.Fatal(err)
		}
	}
	moveMtime(time.Hour) // not racy: the listing counts
	s := NewSnapshotter(spool.NewStore(cfg, nil), nil)
	s.wall = func() time.Time { return wall }
	batches := func(later time.Duration) (names []string, success int) {
		t.Helper()
		s.wall = func() time.Time { return wall.Add(later) }
		st, err := s.Snapshot(t0)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range st.Batches {
			names = append(names, b.Batch)
		}
		return names, st.Lanes[1].Counts.Success
	}
	if names, n := batches(0); n != 2 || !slices.Equal(names, []string{"first"}) {
		t.Fatalf("first: %v %d", names, n)
	}

	// b renamed over by a new file, c new, a gone.
	put(t, cfg, api, taskfile.DirDone, taskfile.Task{TaskID: "b2", Model: "writer", Batch: "renamed"})
	if err := os.Rename(L.TaskPath(api, taskfile.DirDone, "b2"), L.TaskPath(api, taskfile.DirDone, "b")); err != nil {
		t.Fatal(err)
	}
	put(t, cfg, api, taskfile.DirDone, taskfile.Task{TaskID: "c", Model: "writer", Batch: "first"})
	if err := os.Remove(L.TaskPath(api, taskfile.DirDone, "a")); err != nil {
		t.Fatal(err)
	}
	moveMtime(50 * time.Minute)
	if names, n := batches(time.Second); n != 2 || !slices.Equal(names, []string{"first", "renamed"}) {
		t.Fatalf("after renames: %v %d, want [first renamed] 2", names, n)
	}

	// c rewritten in place (same inode), d new: c keeps its summary.
	put(t, cfg, api, taskfile.DirDone, taskfile.Task{TaskID: "c", Model: "writer", Batch: "edited"})
	put(t, cfg, api, taskfile.DirDone, taskfile.Task{TaskID: "d", Model: "writer", Batch: "first"})
	moveMtime(40 * time.Minute)
	if names, n := batches(2 * time.Second); n != 3 || !slices.Equal(names, []string{"first", "renamed"}) {
		t.Fatalf("after an edit in place: %v %d, want [first renamed] 3", names, n)
	}
	// statAfter later every file is stat'ed again: the edit is seen.
	if names, n := batches(statAfter + time.Minute); n != 3 || !slices.Equal(names, []string{"edited", "first", "renamed"}) {
		t.Fatalf("after statAfter: %v %d, want [edited first renamed] 3", names, n)
	}
}
