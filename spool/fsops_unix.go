//go:build unix

package spool

import (
	"os"
	"syscall"

	"github.com/spoolgate/spoolgate/internal/dirsync"
)

// SyncDir fsyncs a folder so renames in it are durable.
func SyncDir(dir string) error {
	f, err := openDirNoFollow(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return dirsync.File(f)
}

// openNoFollow opens path for reading without following a symlink at its
// last component (O_NOFOLLOW: a symlink is refused, not followed out of the
// spool) and without blocking on a fifo (O_NONBLOCK).
func openNoFollow(path string) (*os.File, error) {
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
