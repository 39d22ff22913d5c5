//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package spool

import (
	"os"
	"time"
)

// Without a ctime and inode in os.FileInfo (Windows), size and mtime judge.
func sysStamp(os.FileInfo) (ctime time.Time, dev, ino uint64) { return time.Time{}, 0, 0 }
