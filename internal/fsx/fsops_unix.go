//go:build unix

package fsx

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/spoolgate/spoolgate/internal/dirsync"
)

// SyncDir fsyncs a folder so renames in it are durable. The folder is
// opened as a bare descriptor, not an *os.File: os.NewFile costs an fcntl
// and a failing epoll_ctl (a folder cannot be polled), and a task's moves
// and rewrites sync seven folders.
func SyncDir(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|safeFlags, 0)
	if err != nil {
		return refusal("open", dir, err, WantFolder)
	}
	defer unix.Close(fd)
	if err := dirsync.FD(fd); err != nil {
		return &os.PathError{Op: "sync", Path: dir, Err: err}
	}
	return nil
}

// OpenNoFollow opens path for reading without following a symlink at its
// last component (O_NOFOLLOW: a symlink is refused, not followed out of the
// spool) and without blocking on a fifo (O_NONBLOCK).
func OpenNoFollow(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
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
