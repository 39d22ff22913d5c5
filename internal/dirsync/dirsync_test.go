//go:build unix

package dirsync

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestPath(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dir  string
		want error
	}{
		{"folder", dir, nil},
		{"symlink to a folder", link, nil},
		{"missing", filepath.Join(dir, "nope"), fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Path(tc.dir)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Path(%s) = %v, want %v", tc.dir, err, tc.want)
			}
		})
	}
}

// A descriptor that cannot be synced (a pipe answers EINVAL, as some FUSE
// and network file systems do for a folder) is no error; a closed one is.
func TestFile(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := File(r); err != nil {
		t.Errorf("File(pipe) = %v, want nil (EINVAL is not an error)", err)
	}
	if err := FD(int(r.Fd())); err != nil {
		t.Errorf("FD(pipe) = %v, want nil", err)
	}
	r.Close()
	if err := File(r); err == nil {
		t.Error("File(closed) = nil, want an error")
	}
}
