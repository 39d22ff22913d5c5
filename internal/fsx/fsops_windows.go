package fsx

import (
	"os"

	"golang.org/x/sys/windows"
)

func renameNoReplace(src, dst string) error {
	from, err := windows.UTF16PtrFromString(src)
	if err != nil {
		return err
	}
	to, err := windows.UTF16PtrFromString(dst)
	if err != nil {
		return err
	}
	// Without MOVEFILE_REPLACE_EXISTING, MoveFileEx fails if dst exists.
	err = windows.MoveFileEx(from, to, windows.MOVEFILE_WRITE_THROUGH)
	if err == windows.ERROR_ALREADY_EXISTS || err == windows.ERROR_FILE_EXISTS {
		return os.ErrExist
	}
	if err == windows.ERROR_FILE_NOT_FOUND || err == windows.ERROR_PATH_NOT_FOUND {
		return os.ErrNotExist
	}
	return err
}

// SyncDir is a no-op on Windows: folders cannot be opened for fsync, and
// MOVEFILE_WRITE_THROUGH already makes the move durable.
func SyncDir(dir string) error { return nil }

func OpenNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 || !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: path, Err: windows.ERROR_CANT_ACCESS_FILE}
	}
	return os.Open(path)
}

func linkCount(fi os.FileInfo) uint64 { return 1 }

func ReplaceExisting(tmp, path string) (bool, error) { return false, ErrNoExchange }
