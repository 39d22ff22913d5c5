//go:build unix

package spool

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A drop keeps its door token and the files it wrote through intake only
// when this installation sealed it under its own name: the door's drops
// and a retried record do, a colleague's file saying the same does not.
func TestStore_IntakeKeepsSealedOwner(t *testing.T) {
	wrote := []taskfile.Written{{Path: "r/final.md", SHA256: "ab"}}
	tests := []struct {
		name     string
		sealed   bool
		sealedAs string // the name sealed for, when not the drop's own
		keep     bool
	}{
		{"sealed by the door", true, "", true},
		{"written by a colleague", false, "", false},
		{"sealed for another task's name", true, "other.yaml", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t)
			drop := &taskfile.Task{TaskID: "t1", Model: "fast", Content: "x", DoorToken: "cms", Wrote: wrote}
			var data []byte
			var err error
			switch {
			case tt.sealedAs != "":
				plain, _ := drop.Encode()
				data, err = s.SealFor(sealTaskKind(taskfile.KindAPI), tt.sealedAs, plain)
			case tt.sealed:
				data, err = s.EncodeTask(taskfile.KindAPI, drop)
			default:
				data, err = drop.Encode()
			}
			if err != nil {
				t.Fatal(err)
			}
			in := s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
			if _, err := s.Submit(in, "t1", data); err != nil {
				t.Fatal(err)
			}
			if got, err := s.ReadDrop(taskfile.KindAPI, filepath.Join(in, "t1.yaml")); err != nil || (got.DoorToken == "cms") != tt.keep {
				t.Fatalf("ReadDrop: %+v %v, keep %t", got, err, tt.keep)
			}
			if res, err := s.Intake(in, "t1.yaml", taskfile.KindAPI); err != nil || res.Outcome != Accepted {
				t.Fatalf("intake: %+v %v", res, err)
			}
			got := mustRead(t, s, taskfile.DirPending, "t1")
			if kept := got.DoorToken == "cms" && len(got.Wrote) == 1; kept != tt.keep {
				t.Errorf("pending record: doorToken %q wrote %v; want kept %t", got.DoorToken, got.Wrote, tt.keep)
			}
			if !tt.keep && (got.DoorToken != "" || len(got.Wrote) != 0) {
				t.Errorf("a field kept in part: %+v", got)
			}
		})
	}
}

func sum(b string) string {
	h := sha256.Sum256([]byte(b))
	return hex.EncodeToString(h[:])
}

// running claims and marks api task id, accepted with output out.
func running(t *testing.T, s *Store, id, out string) *Lease {
	t.Helper()
	in := s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	if _, err := s.Submit(in, id, []byte("model: fast\ncontent: x\noutput: "+out+"\n")); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Intake(in, id+".yaml", taskfile.KindAPI); err != nil || res.Outcome != Accepted {
		t.Fatalf("intake %s: %+v %v", id, res, err)
	}
	l, err := s.Claim(taskfile.KindAPI, id, "h:1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Mark(time.Now()); err != nil {
		t.Fatal(err)
	}
	return l
}

// A file under output/ is written once: a second task naming it is
// refused and the file keeps its bytes; the task that wrote it may write
// it again, in the same attempt or after a retry (its record, sealed,
// lists what it wrote), but not once someone else changed the file.
func TestStore_WriteOutputFor(t *testing.T) {
	s := newTestStore(t)
	path := filepath.Join(s.Layout.Output(), "r", "final.md")
	read := func() string { b, _ := os.ReadFile(path); return string(b) }

	a := running(t, s, "a", "r/final.md")
	if err := s.WriteOutputFor(a, "r/final.md", []byte("A1")); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, s, taskfile.DirRunning, "a"); !got.Owns("r/final.md", sum("A1")) {
		t.Fatalf("the record does not list what it wrote: %+v", got.Wrote)
	}
	if err := s.WriteOutputFor(a, "r/final.md", []byte("A2")); err != nil || read() != "A2" {
		t.Fatalf("the same task again: %v, file %q", err, read())
	}
	// Another task, with or without a lease: refused, naming the file.
	if rej := s.CheckOutput(&taskfile.Task{TaskID: "b", Output: "r/final.md"}, taskfile.KindAPI); rej == nil || !strings.Contains(rej.Msg, `"r/final.md" already exists`) {
		t.Errorf("intake of another task: %v", rej)
	}
	b := running(t, s, "b", "r/other.md")
	err := s.WriteOutputFor(b, "r/final.md", []byte("B"))
	var te *OutputTakenError
	if !errors.As(err, &te) || te.Path != "r/final.md" || !strings.Contains(err.Error(), `"r/final.md" already exists in output/`) || read() != "A2" {
		t.Fatalf("another task's write: %v, file %q", err, read())
	}
	if err := s.WriteOutput("r/final.md", []byte("C")); !errors.Is(err, ErrOutputTaken) || read() != "A2" {
		t.Fatalf("a write for no task: %v, file %q", err, read())
	}
	// a fails, is retried: its record goes through intake, sealed, and
	// it may write its file again.
	if _, err := a.Finish(Outcome{State: taskfile.StateFailed, Class: taskfile.ClassPermanent, Error: "x"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Retry(taskfile.KindAPI, "a"); err != nil {
		t.Fatal(err)
	}
	in := s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	if res, err := s.Intake(in, "a.yaml", taskfile.KindAPI); err != nil || res.Outcome != Accepted {
		t.Fatalf("intake of the retry: %+v %v", res, err)
	}
	a2, err := s.Claim(taskfile.KindAPI, "a", "h:1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a2.Mark(time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteOutputFor(a2, "r/final.md", []byte("A3")); err != nil || read() != "A3" {
		t.Fatalf("the retry's write: %v, file %q", err, read())
	}
	// Someone changed the file by hand: not the task's any more.
	if err := os.WriteFile(path, []byte("edited"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteOutputFor(a2, "r/final.md", []byte("A4")); !errors.Is(err, ErrOutputTaken) || read() != "edited" {
		t.Fatalf("a file edited since: %v, file %q", err, read())
	}
}
