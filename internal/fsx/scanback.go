package fsx

import (
	"bytes"
	"errors"
	"io"
)

// ScanBack calls fn with each line of f (size bytes) from the last to the
// first, without its newline, until fn returns false or limit bytes have
// been read; a line longer than maxLine is given as nil (junk, not held),
// so a reader of an append-only log a colleague can write into holds at
// most maxLine bytes of any line. It returns whether it reached the file's
// start.
func ScanBack(f io.ReaderAt, size, limit int64, maxLine int, fn func(line []byte) bool) (atStart bool, err error) {
	const chunk = 64 << 10
	pos := size
	var tail []byte // the end of the line being read, its start not yet seen
	long := false   // the line being read is longer than maxLine
	emit := func(part []byte) bool {
		if long || len(part)+len(tail) > maxLine {
			long = false
			tail = tail[:0]
			return fn(nil)
		}
		line := append(append([]byte{}, part...), tail...)
		tail = tail[:0]
		return fn(line)
	}
	first := true
	for pos > 0 && size-pos < limit {
		n := min(int64(chunk), pos, limit-(size-pos))
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, pos-n); err != nil && !errors.Is(err, io.EOF) {
			return false, err
		}
		pos -= n
		if first {
			// A file ending with its newline: the last line ends there.
			first = false
			if len(buf) > 0 && buf[len(buf)-1] == '\n' {
				buf = buf[:len(buf)-1]
			}
		}
		for {
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 {
				if !long {
					if len(buf)+len(tail) > maxLine {
						long, tail = true, tail[:0]
					} else {
						tail = append(append([]byte{}, buf...), tail...)
					}
				}
				break
			}
			if !emit(buf[i+1:]) {
				return false, nil
			}
			buf = buf[:i]
		}
	}
	if pos > 0 {
		return false, nil // the limit: the line being read has no known start
	}
	if long || len(tail) > 0 {
		emit(nil) // the file's first line
	}
	return true, nil
}
