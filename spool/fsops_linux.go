package spool

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func renameNoReplace(src, dst string) error {
	err := unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		// Some file systems (older NFS, some FUSE) lack RENAME_NOREPLACE.
		return linkRename(src, dst)
	}
	return err
}

// SyncDir fsyncs a folder so renames in it are durable.
func SyncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

func openNoFollow(path string) (*os.File, error) {
	// O_NONBLOCK so a fifo does not block the open; O_NOFOLLOW so a
	// symlink is refused rather than followed out of the spool.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// replaceExisting swaps tmp into path only if path exists (renameat2
// RENAME_EXCHANGE), so a rewrite can never resurrect a file that another
// process moved away. It returns the previous content's temp name (the old
// file now lives at tmp) for the caller to inspect and remove.
func replaceExisting(tmp, path string) (swapped bool, err error) {
	err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return false, errNoExchange
	}
	if err != nil {
		return false, err
	}
	return true, nil
}
