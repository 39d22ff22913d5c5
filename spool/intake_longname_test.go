//go:build unix

package spool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A drop whose name takes the whole 255 bytes, dropped twice: each ends in
// failed/ with a reason file that pairs with it, and the second drop never
// stays in incoming/.
func TestStore_IntakeLongName(t *testing.T) {
	for _, stem := range []string{strings.Repeat("a", 250), strings.Repeat("春", 83) + "x"} {
		s := newTestStore(t)
		in := s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
		name := stem + ".yaml"
		if len(name) != 255 {
			t.Fatalf("test name is %d bytes", len(name))
		}
		for i := 0; i < 2; i++ {
			if err := os.WriteFile(filepath.Join(in, name), []byte("model: fast\ncontent: x\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			res, err := s.Intake(in, name, taskfile.KindAPI)
			if err != nil {
				t.Fatalf("drop %d: %v", i+1, err)
			}
			if res.Outcome != Rejected || !strings.Contains(res.Reason, "taskId") {
				t.Fatalf("drop %d: outcome %v reason %q, want rejected for its taskId", i+1, res.Outcome, res.Reason)
			}
			reason := strings.TrimSuffix(res.Path, ".yaml") + ".error"
			if b, err := os.ReadFile(reason); err != nil || !strings.Contains(string(b), "taskId") {
				t.Fatalf("drop %d: reason file %s: %q, %v", i+1, filepath.Base(reason), b, err)
			}
			if len(filepath.Base(reason)) > 255 || len(filepath.Base(res.Path)) > 255 {
				t.Fatalf("names too long: %s", res.Path)
			}
		}
		ents, _ := os.ReadDir(s.Layout.Lane(taskfile.KindAPI, taskfile.DirFailed))
		if len(ents) != 4 {
			t.Errorf("failed/ holds %d files, want 2 drops and 2 reasons", len(ents))
		}
		if left, _ := os.ReadDir(in); len(left) != 0 {
			t.Errorf("incoming/ still holds %d files", len(left))
		}
	}
}
