package fsx

import (
	"errors"

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

// ReplaceExisting swaps tmp into path only if path exists (renameat2
// RENAME_EXCHANGE), so a rewrite can never resurrect a file that another
// process moved away. It returns the previous content's temp name (the old
// file now lives at tmp) for the caller to inspect and remove.
func ReplaceExisting(tmp, path string) (swapped bool, err error) {
	err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return false, ErrNoExchange
	}
	if err != nil {
		return false, err
	}
	return true, nil
}
