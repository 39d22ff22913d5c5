package fsx

import (
	"bytes"
	"io"
	"os"
	"time"
)

// Stamp is what a writer's every change moves: a file written in place is
// a drop only once its stamp has held still for settle. Size and mtime
// alone are not enough: a copy engine may set the final size first
// (preallocation) and a client may set mtime itself, but neither can set
// ctime, and a file replaced under the same name has another inode.
type Stamp struct {
	size         int64
	mtime, ctime time.Time
	dev, ino     uint64
}

func StampOf(fi os.FileInfo) Stamp {
	s := Stamp{size: fi.Size(), mtime: fi.ModTime()}
	s.ctime, s.dev, s.ino = SysStamp(fi)
	return s
}

// Unfinished reports whether the file at path looks like a writer's file
// not yet written: empty, or NUL bytes at its start or its end, which is
// what a preallocating copy (size first, then the chunks) shows until its
// last chunk lands. No task file holds a NUL byte (text only), so a file
// that does is not complete whatever it is. Only the two ends are read.
func Unfinished(path string) bool {
	f, err := OpenNoFollow(path)
	if err != nil {
		return false // let intake say what is wrong with it
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if fi.Size() == 0 {
		return true
	}
	const n = 4096
	buf := make([]byte, n)
	k, _ := io.ReadFull(f, buf)
	if bytes.IndexByte(buf[:k], 0) >= 0 {
		return true
	}
	if fi.Size() > n {
		off := fi.Size() - n
		k, _ = f.ReadAt(buf, off)
		if bytes.IndexByte(buf[:k], 0) >= 0 {
			return true
		}
	}
	return false
}
