package fsx

import "golang.org/x/sys/unix"

// renameNoReplaceAt moves tmp to name in the folder dfd, failing with
// EEXIST if name is there (renameat2 RENAME_NOREPLACE).
func renameNoReplaceAt(dfd int, tmp, name string) error {
	return unix.Renameat2(dfd, tmp, dfd, name, unix.RENAME_NOREPLACE)
}

// renameExchangeAt swaps tmp and name in the folder dfd atomically
// (renameat2 RENAME_EXCHANGE).
func renameExchangeAt(dfd int, tmp, name string) error {
	return unix.Renameat2(dfd, tmp, dfd, name, unix.RENAME_EXCHANGE)
}
