package spool

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/config"
)

// TestNewStore_NoProcessState: building a Store changes nothing outside
// it. Each Store names its temps for its own config's host, the
// package-level writes keep os.Hostname's, and a folder swapped for a
// symlink is refused by the Store whose spool it is in, not by the
// package-level writes, whatever Stores the process has built.
func TestNewStore_NoProcessState(t *testing.T) {
	h, _ := os.Hostname()
	before := fsx.Plain()
	newStore := func(host string) *Store {
		cfg, err := config.ParseConfig([]byte("spool: " + t.TempDir() + "\nhost: " + host + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		s := NewStore(cfg, nil)
		if err := s.Layout.Create(); err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := newStore("host-a"), newStore("host-b")
	if a.files.Tag != fsx.HostTag("host-a") || b.files.Tag != fsx.HostTag("host-b") {
		t.Errorf("store tags %q %q, want their own hosts'", a.files.Tag, b.files.Tag)
	}
	if fsx.Plain() != before || before.Tag != fsx.HostTag(h) || before.Root != "" {
		t.Errorf("package-level Files %+v, want os.Hostname's tag and no root", fsx.Plain())
	}

	// Swap a's running/ for a symlink to a folder outside the spool.
	outside := t.TempDir()
	running := a.Layout.Lane("api", "running")
	if err := os.Remove(running); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, running); err != nil {
		t.Skip("no symlinks:", err)
	}
	if err := a.files.GuardDir(running); !errors.Is(err, fsx.ErrNotRegular) {
		t.Errorf("a's guard of its swapped folder: %v, want fsx.ErrNotRegular", err)
	}
	if err := a.WriteFileAtomic(filepath.Join(running, "x.yaml"), []byte("x")); !errors.Is(err, fsx.ErrNotRegular) {
		t.Errorf("a's write through its swapped folder: %v, want fsx.ErrNotRegular", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("a wrote outside its spool: %v", ents)
	}
	// The folder is outside b's spool and outside every spool for the
	// package-level functions: no guard applies (before, every Store the
	// process had built guarded every write).
	if err := b.files.GuardDir(running); err != nil {
		t.Errorf("b's guard of a folder outside its spool: %v", err)
	}
	if err := fsx.Plain().GuardDir(running); err != nil {
		t.Errorf("the package-level guard: %v", err)
	}
}
