//go:build unix

package spool

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A drop rejected on a part of its bytes, whose writer then goes on
// writing into the moved file, goes back to incoming/ without its old
// reason and is judged again as the whole file.
func TestStore_Rejudge(t *testing.T) {
	s := newTestStore(t)
	in := s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	f, err := os.Create(filepath.Join(in, "slow.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("model: fast\n") // only the header so far
	res, err := s.Intake(in, "slow.yaml", taskfile.KindAPI)
	if err != nil || res.Outcome != Rejected {
		t.Fatalf("partial drop: %+v %v, want rejected", res, err)
	}
	reason := filepath.Join(s.Layout.Lane(taskfile.KindAPI, taskfile.DirFailed), "slow.error")
	if _, err := os.Stat(reason); err != nil {
		t.Fatal(err)
	}
	if got := s.Rejudge(); len(got) != 0 {
		t.Fatalf("an unchanged rejection was judged again: %v", got)
	}
	f.WriteString("content: the rest, written after the rejection\n") // the writer's fd follows the file
	got := s.Rejudge()
	if len(got) != 1 || got[0] != filepath.Join(in, "slow.yaml") {
		t.Fatalf("Rejudge() = %v, want the drop back in incoming/", got)
	}
	if _, err := os.Stat(reason); !os.IsNotExist(err) {
		t.Errorf("old reason file still there: %v", err)
	}
	res, err = s.Intake(in, "slow.yaml", taskfile.KindAPI)
	if err != nil || res.Outcome != Accepted {
		t.Fatalf("judged again: %+v %v, want accepted", res, err)
	}
	if res.Task.Content != "the rest, written after the rejection" {
		t.Errorf("content %q", res.Task.Content)
	}
	if len(s.Rejudge()) != 0 {
		t.Error("an accepted drop was moved again")
	}
}
