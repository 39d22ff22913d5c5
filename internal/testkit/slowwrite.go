package testkit

import (
	"os"
	"time"
)

// SlowWrite is how a writer puts a file in place, the way copies over a
// slow link and SMB servers do it.
type SlowWrite struct {
	Chunks   int           // the file is written in this many chunks (at least 1)
	Over     time.Duration // from the first chunk to the last
	Chmod    bool          // change the file's mode right after the create and between chunks (an SMB server's attribute updates)
	Prealloc bool          // set the full size first: NUL bytes until each chunk lands (Windows copy engines)
	Empty    bool          // write nothing until the end, then everything (a slow pipe into an SMB put)
}

// Write creates path (it must not exist) and writes data as w says. It is
// the writer's own pace that it sleeps for, not a synchronization.
func (w SlowWrite) Write(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	mode := func(i int) error {
		if !w.Chmod {
			return nil
		}
		return f.Chmod(0o644 &^ os.FileMode(i%2) * 0o004)
	}
	if err := mode(1); err != nil {
		return err
	}
	if w.Prealloc {
		if err := f.Truncate(int64(len(data))); err != nil {
			return err
		}
	}
	n := max(w.Chunks, 1)
	pace := w.Over / time.Duration(n)
	if w.Empty {
		for i := 0; i < n; i++ {
			time.Sleep(pace)
			if err := mode(i); err != nil {
				return err
			}
		}
		_, err := f.Write(data)
		return err
	}
	size := (len(data) + n - 1) / n
	for i, off := 0, 0; off < len(data); i, off = i+1, off+size {
		end := min(off+size, len(data))
		if _, err := f.WriteAt(data[off:end], int64(off)); err != nil {
			return err
		}
		if err := mode(i); err != nil {
			return err
		}
		if end < len(data) {
			time.Sleep(pace)
		}
	}
	return nil
}
