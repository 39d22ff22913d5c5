package main

import "golang.org/x/sys/unix"

// exchange swaps the two names' files: the old version stays as the spare.
func exchange(spare, path string) error {
	return unix.Renameat2(unix.AT_FDCWD, spare, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
}
