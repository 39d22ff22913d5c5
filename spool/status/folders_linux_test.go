package status

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/testkit/smbd"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
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

// TestSnapshotter_ByInodeOnShare: the spool on a real Samba share mounted
// through smbnetfs (FUSE), whose entries all carry inode 0xffffffff: a
// file renamed over another in done/ is read again, not taken for the
// file it replaced.
func TestSnapshotter_ByInodeOnShare(t *testing.T) {
	cfg := newSpool(t)
	srv := smbd.Start(t, map[string]string{"spool": cfg.Spool})
	local := cfg.Spool
	cfg.Spool = srv.Mount(t, "spool")
	api := taskfile.KindAPI
	put(t, cfg, api, taskfile.DirDone, taskfile.Task{TaskID: "b", Model: "writer", Batch: "first"})
	if ents, err := fsx.ReadDirInodes(spool.NewLayout(cfg.Spool).Lane(api, taskfile.DirDone)); err != nil || len(ents) != 1 || ents[0].Ino != 0 {
		t.Logf("the mount's entries: %+v %v", ents, err) // a FUSE that passes inodes through: still tested below
	}
	wall := time.Now()
	s := NewSnapshotter(spool.NewStore(cfg, nil), nil)
	s.wall = func() time.Time { return wall }
	if _, err := s.Snapshot(t0); err != nil {
		t.Fatal(err)
	}
	// b renamed over on the server's side; the next listing (past
	// listingMaxAge, whatever the mount says of the folder's mtime).
	L := spool.NewLayout(local)
	put(t, &config.Config{Spool: local}, api, taskfile.DirDone, taskfile.Task{TaskID: "b2", Model: "writer", Batch: "renamed"})
	if err := os.Rename(L.TaskPath(api, taskfile.DirDone, "b2"), L.TaskPath(api, taskfile.DirDone, "b")); err != nil {
		t.Fatal(err)
	}
	s.wall = func() time.Time { return wall.Add(listingMaxAge + time.Second) }
	st, err := s.Snapshot(t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Batches) != 1 || st.Batches[0].Batch != "renamed" {
		t.Errorf("after b was renamed over on the share: batches %+v, want [renamed]", st.Batches)
	}
}
