//go:build unix

package spool

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A failed attempt's screenshot goes into <lane>/logs/ like a task log:
// a plain name only, and never through a logs folder swapped for a link.
func TestStore_WriteLogFile(t *testing.T) {
	root := t.TempDir()
	s := NewStore(&config.Config{Spool: root}, nil)
	if err := s.WriteLogFile(taskfile.KindWeb, "t1.1.png", []byte("png")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "web", "logs", "t1.1.png")); err != nil || string(b) != "png" {
		t.Fatalf("read back %q, %v", b, err)
	}
	for _, bad := range []string{"", "..", "a/b.png", `a\b.png`} {
		if err := s.WriteLogFile(taskfile.KindWeb, bad, nil); err == nil {
			t.Errorf("name %q was written", bad)
		}
	}
	elsewhere := t.TempDir()
	if err := os.Rename(filepath.Join(root, "web", "logs"), filepath.Join(root, "web", "logs.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, "web", "logs")); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteLogFile(taskfile.KindWeb, "t1.2.png", []byte("png")); err == nil {
		t.Fatal("written through a logs folder that is a symlink")
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Fatalf("files landed where the link points: %v", ents)
	}
}
