//go:build unix

package spool

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A drop listed by a rescan and deleted before intake reads it: nothing is
// done and nothing is written.
func TestStore_IntakeDeletedAfterListing(t *testing.T) {
	s := newTestStore(t)
	in := s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	p := filepath.Join(in, "gone.yaml")
	if err := os.WriteFile(p, []byte("model: fast\ncontent: x\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(in)
	if err != nil || len(ents) != 1 {
		t.Fatalf("listing: %v %v", ents, err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	res, err := s.Intake(in, ents[0].Name(), taskfile.KindAPI)
	if err != nil || res.Outcome != Vanished {
		t.Fatalf("intake of a deleted drop: %+v %v, want Vanished", res, err)
	}
	for _, d := range []string{taskfile.DirPending, taskfile.DirFailed} {
		if left, _ := os.ReadDir(s.Layout.Lane(taskfile.KindAPI, d)); len(left) != 0 {
			t.Errorf("%s/ holds %d files after a vanished drop", d, len(left))
		}
	}
}

// Another daemon's intake of the same drop, caught between the link and
// the unlink of a move without RENAME_NOREPLACE: pending/ID and the drop
// are one file. Intake must leave it, not reject it as a duplicate (which
// would leave the task's only copy in failed/). Once pending/ID is
// normalized, a second drop of the id is a real duplicate.
func TestStore_IntakeLeavesAnInFlightMove(t *testing.T) {
	s := newTestStore(t)
	in := s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	drop := filepath.Join(in, "fly.yaml")
	if err := os.WriteFile(drop, []byte("taskId: fly\nmodel: fast\ncontent: x\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	// The other daemon's link, as linkRename makes it: the drop now has
	// two links, so give our intake a drop of its own with the same bytes
	// (fsx.ReadRegular refuses a linked drop, as it must).
	pend := s.Layout.TaskPath(taskfile.KindAPI, taskfile.DirPending, "fly")
	data, _ := os.ReadFile(drop)
	if err := os.WriteFile(pend, data, 0o640); err != nil {
		t.Fatal(err)
	}
	res, err := s.Intake(in, "fly.yaml", taskfile.KindAPI)
	if err != nil || res.Outcome != Vanished {
		t.Fatalf("intake during another's move: %+v %v, want Vanished (left alone)", res, err)
	}
	if _, err := os.Stat(drop); err != nil {
		t.Fatalf("the drop was moved: %v", err)
	}
	// The other intake completes: pending/fly is normalized. The same
	// drop now is a duplicate.
	if _, err := s.loadPendingOne(taskfile.KindAPI, "fly"); err != nil {
		t.Fatal(err)
	}
	res, err = s.Intake(in, "fly.yaml", taskfile.KindAPI)
	if err != nil || res.Outcome != Rejected {
		t.Fatalf("a real duplicate: %+v %v, want Rejected", res, err)
	}
}

// Task files in spoolgate's own folders are read whatever their link
// count: on a share without RENAME_NOREPLACE a move is link-then-unlink
// and the client may report two links for a while.
func TestReadTaskFile_LinkCountIgnored(t *testing.T) {
	s := newTestStore(t)
	p := s.Layout.TaskPath(taskfile.KindAPI, taskfile.DirRunning, "two")
	if err := os.WriteFile(p, []byte("taskId: two\nmodel: fast\ncontent: x\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(p, filepath.Join(t.TempDir(), "other")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTaskFile(p); err != nil {
		t.Fatalf("ReadTaskFile with two links: %v", err)
	}
	if _, _, err := fsx.ReadRegular(p, taskfile.MaxTaskSize); err == nil {
		t.Fatal("fsx.ReadRegular (drops) accepted a file with two links")
	}
}
