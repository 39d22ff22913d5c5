//go:build unix && !linux

package spool

// Without renameat2, the no-replace move is link+unlink.
func renameNoReplace(src, dst string) error { return linkRename(src, dst) }

func replaceExisting(tmp, path string) (bool, error) { return false, errNoExchange }
