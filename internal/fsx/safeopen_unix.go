//go:build unix

package fsx

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/spoolgate/spoolgate/internal/dirsync"
)

// safeFlags go on every open in the spool: never follow a symlink at the
// last component, never block (a fifo answers at once), never leak the fd
// into a child (the browser).
const safeFlags = unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC

// refusal turns an open's errno into a NotRegularError where it means a
// symlink, fifo or folder is in the way; other errors pass through as
// *os.PathError.
func refusal(op, path string, err error, want string) error {
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EMLINK):
		// O_NOFOLLOW on a symlink: ELOOP (EMLINK on some BSDs).
		return &NotRegularError{Path: path, Kind: "symlink", Want: want}
	case errors.Is(err, unix.ENXIO):
		// O_WRONLY|O_NONBLOCK on a fifo nobody reads (or a device).
		return &NotRegularError{Path: path, Kind: kindAt(path), Want: want}
	case errors.Is(err, unix.EISDIR):
		return &NotRegularError{Path: path, Kind: "directory", Want: want}
	case errors.Is(err, unix.ENOTDIR) && want == WantFolder:
		return &NotRegularError{Path: path, Kind: kindAt(path), Want: want}
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

// checkFd refuses an open file that is not what the caller wants, by fstat
// of the file itself (no window between check and use). It closes fd when
// it refuses.
func checkFd(fd int, path, want string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	mode := uint32(st.Mode) & unix.S_IFMT
	ok := mode == unix.S_IFREG
	if want == WantFolder {
		ok = mode == unix.S_IFDIR
	}
	if !ok {
		unix.Close(fd)
		return &NotRegularError{Path: path, Kind: kindOfUnix(mode), Want: want}
	}
	return nil
}

func kindOfUnix(mode uint32) string {
	switch mode {
	case unix.S_IFREG:
		return "regular file"
	case unix.S_IFDIR:
		return "directory"
	case unix.S_IFLNK:
		return "symlink"
	case unix.S_IFIFO:
		return "fifo"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "device"
	}
	return "special file"
}

// openFileSafe opens path with flag (plus safeFlags) and checks by fstat
// that it is a regular file.
func openFileSafe(path string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := unix.Open(path, flag|safeFlags, uint32(perm.Perm()))
	if err != nil {
		return nil, refusal("open", path, err, WantFile)
	}
	if err := checkFd(fd, path, WantFile); err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenAppend opens path for appending, creating it (FilePerm) if missing,
// refusing a symlink, fifo or anything else that is not a regular file.
func OpenAppend(path string) (*os.File, error) {
	return openFileSafe(path, unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND, FilePerm)
}

// OpenWrite opens an existing regular file for writing (no truncation:
// the caller truncates once it knows what it opened).
func OpenWrite(path string) (*os.File, error) {
	return openFileSafe(path, unix.O_WRONLY, 0)
}

// CreateExcl creates path, which must not exist (temp files).
func CreateExcl(path string) (*os.File, error) {
	return openFileSafe(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, FilePerm)
}

func OpenDirNoFollow(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|safeFlags, 0)
	if err != nil {
		return nil, refusal("open", dir, err, WantFolder)
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// openDirBeneath opens root (followed if a symlink: the operator's choice)
// and then each of parts below it with O_NOFOLLOW, creating missing ones
// when mkdir is set. It returns the last folder's fd: a folder swapped for
// a symlink anywhere on the way is refused, never followed, at the moment
// of use.
func openDirBeneath(root string, parts []string, mkdir bool) (int, string, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return -1, root, &os.PathError{Op: "open", Path: root, Err: err}
	}
	path := root
	for _, p := range parts {
		path = filepath.Join(path, p)
		next, err := unix.Openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|safeFlags, 0)
		if errors.Is(err, unix.ENOENT) && mkdir {
			if merr := unix.Mkdirat(fd, p, uint32(DirPerm)); merr != nil && !errors.Is(merr, unix.EEXIST) {
				unix.Close(fd)
				return -1, path, &os.PathError{Op: "mkdir", Path: path, Err: merr}
			}
			next, err = unix.Openat(fd, p, unix.O_RDONLY|unix.O_DIRECTORY|safeFlags, 0)
		}
		unix.Close(fd)
		if err != nil {
			return -1, path, refusal("open", path, err, WantFolder)
		}
		fd = next
	}
	return fd, path, nil
}

// OpenAppendBeneath opens root/rel for appending: every folder on the way
// opened without following a link, the file created if missing, and
// refused unless it is a regular file.
func OpenAppendBeneath(root, rel string) (*os.File, error) {
	parts, err := SplitRel(rel)
	if err != nil {
		return nil, err
	}
	dfd, dir, err := openDirBeneath(root, parts[:len(parts)-1], false)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	name := parts[len(parts)-1]
	path := filepath.Join(dir, name)
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND|safeFlags, uint32(FilePerm))
	if err != nil {
		return nil, refusal("open", path, err, WantFile)
	}
	if err := checkFd(fd, path, WantFile); err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// WriteBeneath writes data to root/rel durably and atomically (temp file,
// fsync, rename, folder fsync), every step relative to the folder's fd: a
// folder on the way swapped for a symlink between any two steps is refused,
// never written through. Missing folders are created. An existing target
// that is not a regular file is refused.
func WriteBeneath(root, rel string, data []byte, tag string) error {
	st, err := stageBeneath(root, rel, data, tag)
	if err != nil {
		return err
	}
	defer unix.Close(st.dfd)
	if err := unix.Renameat(st.dfd, st.tmp, st.dfd, st.name); err != nil {
		unix.Unlinkat(st.dfd, st.tmp, 0)
		return &os.PathError{Op: "write", Path: st.path, Err: err}
	}
	if err := dirsync.FD(st.dfd); err != nil {
		return &os.PathError{Op: "sync", Path: st.dir, Err: err}
	}
	return nil
}

// staged is data written and synced to a temp file beside its target,
// in the folder open at dfd (the caller closes it), not yet moved in.
type staged struct {
	dfd                  int
	dir, name, path, tmp string
}

// stageBeneath opens root/rel's folder beneath root (creating missing
// folders), refuses a target that is there and not a regular file, and
// writes data to a new temp file beside it, fsynced: the first half of
// WriteBeneath and WriteBeneathNew, which differ in how they move it in.
func stageBeneath(root, rel string, data []byte, tag string) (staged, error) {
	parts, err := SplitRel(rel)
	if err != nil {
		return staged{}, err
	}
	dfd, dir, err := openDirBeneath(root, parts[:len(parts)-1], true)
	if err != nil {
		return staged{}, err
	}
	st := staged{dfd: dfd, dir: dir, name: parts[len(parts)-1]}
	st.path = filepath.Join(dir, st.name)
	fail := func(err error) (staged, error) {
		unix.Close(dfd)
		return staged{}, err
	}
	var fi unix.Stat_t
	if err := unix.Fstatat(dfd, st.name, &fi, unix.AT_SYMLINK_NOFOLLOW); err == nil && uint32(fi.Mode)&unix.S_IFMT != unix.S_IFREG {
		return fail(&NotRegularError{Path: st.path, Kind: kindOfUnix(uint32(fi.Mode) & unix.S_IFMT), Want: WantFile})
	}
	st.tmp = filepath.Base(TempName(st.path, tag))
	fd, err := unix.Openat(dfd, st.tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|safeFlags, uint32(FilePerm))
	if err != nil {
		return fail(&os.PathError{Op: "create", Path: filepath.Join(dir, st.tmp), Err: err})
	}
	f := os.NewFile(uintptr(fd), st.tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlinkat(dfd, st.tmp, 0)
		return fail(&os.PathError{Op: "write", Path: st.path, Err: err})
	}
	return st, nil
}

// NoFollowFlags are the open flags for a file opened by a library that
// takes flags (the web lock): no symlink followed, no blocking on a fifo.
const NoFollowFlags = unix.O_NOFOLLOW | unix.O_NONBLOCK
