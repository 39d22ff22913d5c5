//go:build unix && !linux

package fsx

import "golang.org/x/sys/unix"

// renameNoReplaceAt has no renameat2 here: ENOSYS sends the caller to its
// portable link-then-unlink move.
func renameNoReplaceAt(int, string, string) error { return unix.ENOSYS }

// renameExchangeAt has no atomic swap here: ENOSYS sends the caller to a
// plain replace, checked a moment before.
func renameExchangeAt(int, string, string) error { return unix.ENOSYS }
