//go:build !unix

package dirsync

import "os"

// Windows cannot open a folder for a sync, and needs none: NTFS journals
// its metadata, and spool's moves ask for MOVEFILE_WRITE_THROUGH.
const canSync = false

// File does nothing where folders cannot be synced.
func File(*os.File) error { return nil }
