// Package fsx holds the operating system's primitives that know no task:
// durable writes (temp, fsync, rename, fsync the folder), renames that
// never replace, opens that refuse links and special files, folders
// guarded against a swapped symlink, temp and spare file names, settle
// stamps, the share probe's raw syscalls, process liveness and process
// groups. Every per-OS file of the product lives here; the spool's Store,
// and whoever reads the spool's raw files, build on it.
package fsx

import (
	"errors"
	"fmt"
	"os"
)

// Permissions of everything spoolgate creates.
const (
	DirPerm  os.FileMode = 0o750
	FilePerm os.FileMode = 0o640
)

// ErrNoExchange: the file system cannot swap two names atomically
// (renameat2 RENAME_EXCHANGE); the caller falls back to a plain rename.
var ErrNoExchange = errors.New("rename exchange not supported")

// ErrExistRaw is the probe's expected refusal of a no-replace move.
var ErrExistRaw = fmt.Errorf("exists: %w", os.ErrExist)
