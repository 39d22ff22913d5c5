package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The spool is shared ground: anyone who can write to the share can put a
// symlink, a fifo or a device where spoolgate expects one of its files or
// folders. Every file spoolgate opens in the spool goes through the helpers
// of this file set (safeopen_unix.go, safeopen_windows.go):
//
//   - a symlink is never followed: O_NOFOLLOW at the last component, and
//     an openat walk from a trusted root where a folder on the way could be
//     swapped (task logs, output files);
//   - an open never blocks: O_NONBLOCK, so a fifo answers at once;
//   - what is opened must be a regular file (by fstat of the open file, so
//     no swap after a check), else it is refused with a NotRegularError;
//   - folders are listed through an open that refuses symlinks and
//     anything that is not a folder.
//
// The spool root itself may be a symlink: it is the operator's choice, in
// the config, not something a drop can change.

// ErrNotRegular matches every NotRegularError.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError is a path spoolgate refused to open, write or list: a
// symlink, fifo, device, socket, or a folder where a file belongs (or a
// file where a folder belongs).
type NotRegularError struct {
	Path string
	Kind string // what is there: "symlink", "fifo", "directory", "regular file"...
	Want string // "regular file" or "folder"
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is a %s, not a %s: refused (spoolgate never follows links or opens special Files in the spool)", e.Path, e.Kind, e.Want)
}

// Is makes errors.Is(err, ErrNotRegular) hold.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

const (
	WantFile   = "regular file"
	WantFolder = "folder"
)

// kindAt names what is at path without following it, for a refusal.
func kindAt(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return "special file"
	}
	if fi.Mode().IsRegular() {
		return "regular file"
	}
	return KindOf(fi.Mode())
}

// SwitchOn reports whether the switch file at path is on: it exists and
// is a regular file (pause files, account switches). Anything else there
// (a symlink, a fifo, a folder) is not honoured and comes back as the
// error, for the caller to log; it is looked at with Lstat, never opened.
func SwitchOn(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return false, nil
	}
	if !fi.Mode().IsRegular() {
		return false, &NotRegularError{Path: path, Kind: KindOf(fi.Mode()), Want: WantFile}
	}
	return true, nil
}

// ReadDir lists a folder of the spool, sorted by name, refusing a symlink
// or anything that is not a folder (NotRegularError) and never blocking on
// a fifo put in a folder's place.
func ReadDir(dir string) ([]os.DirEntry, error) {
	f, err := OpenDirNoFollow(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	sortEntries(ents)
	return ents, err
}

// DirInode is one entry of a folder as the folder itself records it
// (ReadDirInodes): its name, its type (Known false when the file system
// does not say without a stat) and its inode number (0: not known).
type DirInode struct {
	Name  string
	Type  fs.FileMode
	Known bool
	Ino   uint64
}

// ReadDirNames is ReadDir for names only: no stat of each entry, for
// folders that may hold very many files.
func ReadDirNames(dir string) ([]string, error) {
	f, err := OpenDirNoFollow(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// sortEntries sorts as os.ReadDir does; callers rely on the order.
func sortEntries(ents []os.DirEntry) {
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}

// SplitRel splits a slash- or separator-separated relative path into its
// parts, dropping empty and "." parts. It refuses "..": callers have
// validated the path already, this is defence in depth.
func SplitRel(rel string) ([]string, error) {
	var parts []string
	for _, p := range strings.Split(filepath.ToSlash(rel), "/") {
		switch p {
		case "", ".":
			continue
		case "..":
			return nil, fmt.Errorf("%q leaves its folder", rel)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%q names no file", rel)
	}
	return parts, nil
}

// LstatBeneath reports what is at root/rel without following any link on
// the way: the kind of the first component that is not a folder (or, for
// the last, not a regular file), or "" if all is well or nothing is there
// yet. It is the intake's early check of an output path; the write itself
// is WriteBeneath.
func LstatBeneath(root string, parts []string) (string, string, error) {
	path := root
	for i, p := range parts {
		path = filepath.Join(path, p)
		fi, err := os.Lstat(path)
		if errors.Is(err, os.ErrNotExist) {
			return "", "", nil
		}
		if err != nil {
			return "", path, err
		}
		last := i == len(parts)-1
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			return "symlink", path, nil
		case !last && !fi.IsDir():
			return KindName(fi.Mode()), path, nil
		case last && !fi.Mode().IsRegular():
			return KindName(fi.Mode()), path, nil
		}
	}
	return "", "", nil
}

func KindName(m os.FileMode) string {
	if m.IsRegular() {
		return "regular file"
	}
	return KindOf(m)
}

// AppendBeneath appends data to root/rel, opened as OpenAppendBeneath
// opens it, and closes it.
func AppendBeneath(root, rel string, data []byte) error {
	f, err := OpenAppendBeneath(root, rel)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
