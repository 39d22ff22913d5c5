//go:build unix

package spool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestStore_CheckOutput(t *testing.T) {
	s := newTestStore(t)
	outside := t.TempDir()
	out := s.Layout.Output()
	os.MkdirAll(filepath.Join(out, "dir", "sub"), 0o750)
	os.WriteFile(filepath.Join(out, "dir", "old.txt"), nil, 0o640)
	os.Symlink(outside, filepath.Join(out, "evil"))
	os.Symlink(filepath.Join(outside, "x"), filepath.Join(out, "dir", "link.txt"))
	os.WriteFile(filepath.Join(out, "file"), nil, 0o640)
	syscall.Mkfifo(filepath.Join(out, "pipe"), 0o640)
	s.SetOutputOwner(func(key string) (string, bool) {
		if key == "taken/x.txt" {
			return "api/other", true
		}
		if key == "mine.txt" {
			return "api/me", true
		}
		return "", false
	})
	tests := []struct{ output, reason string }{
		{"new.txt", ""},
		{"new/deep/a.txt", ""},
		{"dir/old.txt", `"dir/old.txt" already exists in output/ and this task did not write it`},
		{"dir/sub/new.txt", ""},
		{"./dir/x.txt", ""},
		{"mine.txt", ""}, // the task's own output (its id is "me")
		{"dir", "is a directory, not a file"},
		{"dir/", "names a folder"},
		{"evil/x.txt", "goes through " + filepath.Join(out, "evil") + ", which is a symlink"},
		{"dir/link.txt", "which is a symlink"},
		{"file/x.txt", "which is a regular file, not a folder"},
		{"pipe", "is a fifo"},
		{"taken/x.txt", "already the output of task api/other"},
		{"taken//x.txt", "already the output of task api/other"},
		{"a/.sg-x-1-2.tmp", "temp-file names"},
		{strings.Repeat("a", 256), "over 255 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.output, func(t *testing.T) {
			rej := s.CheckOutput(&taskfile.Task{TaskID: "me", Output: tt.output}, taskfile.KindAPI)
			switch {
			case tt.reason == "" && rej != nil:
				t.Errorf("refused: %s", rej.Msg)
			case tt.reason != "" && (rej == nil || !strings.Contains(rej.Msg, tt.reason)):
				t.Errorf("got %v, want a reason with %q", rej, tt.reason)
			case rej != nil && !strings.HasPrefix(rej.Msg, "output: "):
				t.Errorf("reason does not name the field: %s", rej.Msg)
			}
		})
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("the check wrote outside: %v", ents)
	}
}

func TestStore_WriteOutput(t *testing.T) {
	s := newTestStore(t)
	outside := t.TempDir()
	out := s.Layout.Output()
	if err := s.WriteOutput("a/b/c.txt", []byte("answer")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "a", "b", "c.txt")); string(b) != "answer" {
		t.Errorf("c.txt = %q", b)
	}
	if err := s.WriteOutput("a/b/c.txt", []byte("again")); !errors.Is(err, ErrOutputTaken) {
		t.Fatalf("a second write of c.txt: %v, want ErrOutputTaken", err)
	}
	// A folder on the way swapped for a symlink after intake's check.
	os.Rename(filepath.Join(out, "a"), filepath.Join(out, "a.real"))
	os.Symlink(outside, filepath.Join(out, "a"))
	err := s.WriteOutput("a/b/c.txt", []byte("stolen"))
	if !errors.Is(err, fsx.ErrNotRegular) || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("write through a swapped folder: %v", err)
	}
	// The output folder itself swapped.
	os.Rename(out, out+".real")
	os.Symlink(outside, out)
	if err := s.WriteOutput("x.txt", []byte("stolen")); !errors.Is(err, fsx.ErrNotRegular) {
		t.Errorf("write through a swapped output/: %v", err)
	}
	os.Remove(out)
	os.Rename(out+".real", out)
	// The target itself a symlink, a folder, a fifo.
	os.Symlink(filepath.Join(outside, "t"), filepath.Join(out, "t.txt"))
	os.Mkdir(filepath.Join(out, "d.txt"), 0o750)
	syscall.Mkfifo(filepath.Join(out, "p.txt"), 0o640)
	for _, name := range []string{"t.txt", "d.txt", "p.txt"} {
		if err := s.WriteOutput(name, []byte("x")); !errors.Is(err, fsx.ErrNotRegular) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("written outside the spool: %v", ents)
	}
	if err := s.WriteOutput("../x", nil); err == nil {
		t.Error("an escaping path was written")
	}
	// No temp file left behind by the refusals.
	filepath.WalkDir(s.Layout.Root, func(p string, d os.DirEntry, err error) error {
		if err == nil && fsx.IsOwnTemp(d.Name()) {
			t.Errorf("temp left: %s", p)
		}
		return nil
	})
}
