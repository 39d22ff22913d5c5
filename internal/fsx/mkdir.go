package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MkdirBeneath creates dir and the folders above it that are missing, as
// os.MkdirAll would, but opened like the rest of the spool: every folder
// from the spool root down must be a real folder (Lstat, never followed),
// so a planted symlink (an archive month pointing outside the spool) is
// refused and nothing is created through it. A dir outside the spool is
// refused too.
func (f Files) MkdirBeneath(dir string) error {
	dir = filepath.Clean(dir)
	if f.Root == "" {
		return os.MkdirAll(dir, DirPerm)
	}
	rel, err := filepath.Rel(f.Root, dir)
	if err != nil {
		return fmt.Errorf("%s: not inside the spool %s", dir, f.Root)
	}
	parts, err := SplitRel(rel) // refuses ".."
	if err != nil {
		return fmt.Errorf("%s: not inside the spool %s: %w", dir, f.Root, err)
	}
	cur := f.Root
	for _, p := range parts {
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(cur, DirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if err := CheckFolder(cur); err != nil { // raced by a symlink
				return err
			}
		case err != nil:
			return err
		case !fi.IsDir():
			return &NotRegularError{Path: cur, Kind: KindName(fi.Mode()), Want: WantFolder}
		}
	}
	return nil
}
