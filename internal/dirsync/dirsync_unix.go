//go:build unix

package dirsync

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

const canSync = true

// File syncs the open folder f. A file system that cannot sync a folder
// answers EINVAL (some FUSE and network file systems): it has nothing more
// to give, so that is not an error.
func File(f *os.File) error {
	if err := f.Sync(); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	return nil
}

// FD is File for a folder open as a descriptor (openat-relative writes).
func FD(fd int) error {
	if err := unix.Fsync(fd); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	return nil
}
