//go:build unix && !linux

package fsx

// Without renameat2, the no-replace move is link+unlink.
func renameNoReplace(src, dst string) error { return linkRename(src, dst) }

func ReplaceExisting(tmp, path string) (bool, error) { return false, ErrNoExchange }
