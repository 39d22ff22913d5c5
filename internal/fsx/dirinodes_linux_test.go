package fsx

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReadDirInodes: the entries of a folder as ReadDir gives them (names
// in order, types), each with the inode a stat gives, and many more than
// one getdents buffer holds.
func TestReadDirInodes(t *testing.T) {
	dir := t.TempDir()
	for i := range 2000 { // 80 KiB of records: two buffers
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("task-%c-%04d.yaml", 'a'+i%26, i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDirInodes(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.Name() || (g.Known && g.Type != w.Type()) {
			t.Fatalf("entry %d: %+v, want %s %v", i, g, w.Name(), w.Type())
		}
		fi, err := os.Lstat(filepath.Join(dir, g.Name))
		if err != nil {
			t.Fatal(err)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Ino != g.Ino {
			t.Fatalf("%s: inode %d, stat says %d", g.Name, g.Ino, st.Ino)
		}
	}
	if _, err := ReadDirInodes(filepath.Join(dir, "link.yaml")); err == nil {
		t.Error("a link to a folder's place was listed")
	}
}

// TestDistinctInodes: a folder's inode numbers count only when they are
// real: FUSE's unknown number (smbnetfs gives it to every entry, one
// alone included) or two entries on one number are none.
func TestDistinctInodes(t *testing.T) {
	for _, tc := range []struct {
		inos []uint64
		want bool
	}{
		{[]uint64{12, 7, 99}, true},
		{nil, true},
		{[]uint64{12, 7, 12}, false},
		{[]uint64{fuseUnknownIno}, false},
		{[]uint64{5, fuseUnknownIno, 6}, false},
	} {
		var ents []DirInode
		for _, i := range tc.inos {
			ents = append(ents, DirInode{Ino: i})
		}
		if got := distinctInodes(ents); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.inos, got, tc.want)
		}
	}
}
