package fsx

import (
	"errors"
	"os"
	"path/filepath"
)

// Windows has no O_NOFOLLOW or openat: each open is preceded by an Lstat
// that refuses links (reparse points) and special files, and checked after
// by a Stat of the open file. Writes beneath a root go through os.Root,
// which never leaves the root. Windows has no fifos in the file system.

func openFileSafe(path string, flag int, perm os.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Kind: KindName(fi.Mode()), Want: WantFile}
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, err
		}
		return nil, &NotRegularError{Path: path, Kind: KindName(fi.Mode()), Want: WantFile}
	}
	return f, nil
}

// OpenAppend opens path for appending, creating it if missing, refusing
// anything that is not a regular file.
func OpenAppend(path string) (*os.File, error) {
	return openFileSafe(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, FilePerm)
}

// OpenWrite opens an existing regular file for writing, without truncating.
func OpenWrite(path string) (*os.File, error) { return openFileSafe(path, os.O_WRONLY, 0) }

func CreateExcl(path string) (*os.File, error) {
	return openFileSafe(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FilePerm)
}

func OpenDirNoFollow(dir string) (*os.File, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() || fi.Mode()&os.ModeSymlink != 0 {
		return nil, &NotRegularError{Path: dir, Kind: KindName(fi.Mode()), Want: WantFolder}
	}
	return os.Open(dir)
}

// rootDir opens root and checks each folder of parts below it (creating
// missing ones when mkdir is set); os.Root keeps every later step inside.
func rootDir(root string, parts []string, mkdir bool) (*os.Root, string, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, "", err
	}
	rel := ""
	for _, p := range parts {
		rel = filepath.Join(rel, p)
		fi, err := r.Lstat(rel)
		if errors.Is(err, os.ErrNotExist) && mkdir {
			if err = r.Mkdir(rel, DirPerm); err == nil || errors.Is(err, os.ErrExist) {
				fi, err = r.Lstat(rel)
			}
		}
		if err != nil {
			r.Close()
			return nil, "", err
		}
		if !fi.IsDir() || fi.Mode()&os.ModeSymlink != 0 {
			r.Close()
			return nil, "", &NotRegularError{Path: filepath.Join(root, rel), Kind: KindName(fi.Mode()), Want: WantFolder}
		}
	}
	return r, rel, nil
}

// rootTarget opens root/rel's folder through rootDir and refuses a target
// that exists and is not a regular file. It returns the root and the
// target's name relative to it.
func rootTarget(root, rel string, mkdir bool) (*os.Root, string, error) {
	parts, err := SplitRel(rel)
	if err != nil {
		return nil, "", err
	}
	r, dir, err := rootDir(root, parts[:len(parts)-1], mkdir)
	if err != nil {
		return nil, "", err
	}
	name := filepath.Join(dir, parts[len(parts)-1])
	if fi, err := r.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		r.Close()
		return nil, "", &NotRegularError{Path: filepath.Join(root, name), Kind: KindName(fi.Mode()), Want: WantFile}
	}
	return r, name, nil
}

func OpenAppendBeneath(root, rel string) (*os.File, error) {
	r, name, err := rootTarget(root, rel, false)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, FilePerm)
}

func WriteBeneath(root, rel string, data []byte, tag string) error {
	r, name, tmp, err := stageBeneath(root, rel, data, tag)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Rename(tmp, name); err != nil {
		r.Remove(tmp)
		return err
	}
	return nil
}

// stageBeneath opens root/rel's folder as an os.Root (the caller closes
// it) and writes data to a new temp file beside the target, synced, not
// yet moved in: the first half of WriteBeneath and WriteBeneathNew.
func stageBeneath(root, rel string, data []byte, tag string) (r *os.Root, name, tmp string, err error) {
	r, name, err = rootTarget(root, rel, true)
	if err != nil {
		return nil, "", "", err
	}
	tmp = filepath.Join(filepath.Dir(name), filepath.Base(TempName(filepath.Join(root, name), tag)))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FilePerm)
	if err != nil {
		r.Close()
		return nil, "", "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Remove(tmp)
		r.Close()
		return nil, "", "", err
	}
	return r, name, tmp, nil
}

// NoFollowFlags: Windows has no such open flags; callers check by Lstat.
const NoFollowFlags = 0
