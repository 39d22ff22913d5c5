package fsx

import (
	"os"
	"path/filepath"
)

func CheckFolder(d string) error {
	fi, err := os.Lstat(d)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &NotRegularError{Path: d, Kind: KindName(fi.Mode()), Want: WantFolder}
	}
	return nil
}

// GuardDir checks, with Lstat, that every folder from f's spool root down
// to dir is a real folder, so that a temp file is never created through a
// folder swapped for a symlink. Paths outside the spool pass.
func (f Files) GuardDir(dir string) error {
	if f.Root == "" {
		return nil
	}
	dir = filepath.Clean(dir)
	if f.Folders.Holds(dir) {
		return nil // one stat: dir is the very folder a walk reached (folderid.go)
	}
	var below []string
	for d := dir; ; d = filepath.Dir(d) {
		if d == f.Root {
			break
		}
		if filepath.Dir(d) == d || len(below) > 8 {
			return nil // not in a spool we know
		}
		below = append(below, d)
	}
	for i := len(below) - 1; i >= 0; i-- {
		if err := CheckFolder(below[i]); err != nil {
			return err
		}
	}
	f.Folders.Learn(f.Root, dir)
	return nil
}

// GuardedRename is renameNoReplace after guardDir of both folders: a task
// file is never moved through a folder swapped for a symlink, out of the
// spool or into it from outside.
func (f Files) GuardedRename(src, dst string) error {
	if err := f.GuardDir(filepath.Dir(src)); err != nil {
		return err
	}
	if filepath.Dir(dst) != filepath.Dir(src) {
		if err := f.GuardDir(filepath.Dir(dst)); err != nil {
			return err
		}
	}
	return renameNoReplace(src, dst)
}
