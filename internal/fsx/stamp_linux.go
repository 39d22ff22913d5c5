package fsx

import (
	"os"
	"syscall"
	"time"
)

func SysStamp(fi os.FileInfo) (ctime time.Time, dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Sec, st.Ctim.Nsec), uint64(st.Dev), st.Ino
	}
	return time.Time{}, 0, 0
}
