//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package fsx

import (
	"os"
	"time"
)

// Without a ctime and inode in os.FileInfo (Windows), size and mtime judge.
func SysStamp(os.FileInfo) (ctime time.Time, dev, ino uint64) { return time.Time{}, 0, 0 }
