//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package fsx

import (
	"os"
	"syscall"
	"time"
)

func SysStamp(fi os.FileInfo) (ctime time.Time, dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec)), uint64(st.Dev), uint64(st.Ino)
	}
	return time.Time{}, 0, 0
}
