//go:build linux

package spool

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestFiles_GuardDir guards the guard's cache of verified folders: a
// folder a walk verified passes by one stat, and whatever replaces it (a
// symlink in its place or in place of the folder above it, another folder
// of the same name) is walked again: refused if it is not a real folder,
// learned anew if it is.
func TestFiles_GuardDir(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, lane, pending, outside string)
		refuse bool
	}{
		{"unchanged", func(*testing.T, string, string, string) {}, false},
		{"folder swapped for a symlink", func(t *testing.T, lane, pending, outside string) {
			mustDo(t, os.Rename(pending, pending+".old"), os.Symlink(outside, pending))
		}, true},
		{"lane folder swapped for a symlink to a tree of the same shape", func(t *testing.T, lane, pending, outside string) {
			mustDo(t, os.Mkdir(filepath.Join(outside, "pending"), 0o750), os.Rename(lane, lane+".old"), os.Symlink(outside, lane))
		}, true},
		{"folder made again", func(t *testing.T, lane, pending, outside string) {
			mustDo(t, os.Rename(pending, pending+".old"), os.Mkdir(pending, 0o750))
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t)
			lane := s.Layout.Lane(taskfile.KindAPI, "")
			pending := s.Layout.Lane(taskfile.KindAPI, taskfile.DirPending)
			if err := s.files.GuardDir(pending); err != nil {
				t.Fatal(err)
			}
			if !s.files.Folders.Holds(pending) {
				t.Fatal("a walked folder was not learned")
			}
			tt.change(t, filepath.Clean(lane), pending, t.TempDir())
			err := s.files.GuardDir(pending)
			if tt.refuse {
				if !errors.Is(err, fsx.ErrNotRegular) {
					t.Fatalf("guardDir = %v, want a refusal", err)
				}
				if s.files.Folders.Holds(pending) {
					t.Fatal("a refused path holds a learned folder")
				}
				return
			}
			if err != nil {
				t.Fatalf("guardDir = %v", err)
			}
			if !s.files.Folders.Holds(pending) {
				t.Fatal("the folder was not learned (again)")
			}
		})
	}
}

func mustDo(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
