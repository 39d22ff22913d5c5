package fsx

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// LinkedError is a file refused for its extra hard links.
type LinkedError struct{ n uint64 }

func (e *LinkedError) Error() string {
	return fmt.Sprintf("file has %d hard links: a task file must have one (hard link from outside the spool?)", e.n)
}

// ErrExists is returned by RenameNoReplace when the destination exists.
var ErrExists = os.ErrExist

// tmpPrefix marks spoolgate's own temp files (see tempfiles.go); only
// names of this form are ever removed as leftovers.
const tmpPrefix = ".sg-"

// IsOwnTemp reports whether name is one of spoolgate's temp files.
func IsOwnTemp(name string) bool {
	return len(name) > len(tmpPrefix) && name[:len(tmpPrefix)] == tmpPrefix && filepath.Ext(name) == ".tmp"
}

// WriteFileAtomic writes data to path durably: a temp file in the same
// folder, fsync, rename over path, fsync the folder. Readers see the old
// or the new content, never a mix; a crash leaves at most a temp file.
// Its temp is named for os.Hostname and no folder is guarded: inside a
// spool, use Store.WriteFileAtomic.
func WriteFileAtomic(path string, data []byte) error { return Plain().WriteAtomic(path, data) }

// WriteFileNew writes data to path durably, failing with ErrExists (never
// overwriting) if path exists. Inside a spool, use Store.WriteFileNew.
func WriteFileNew(path string, data []byte) error { return Plain().WriteNew(path, data) }

// RenameNoReplace moves src to dst and fsyncs both folders. If dst exists
// it fails with an error matching ErrExists and moves nothing: of two
// processes racing for one source, exactly one wins, and the loser gets
// an error matching os.ErrNotExist. Inside a spool, use
// Store.RenameNoReplace.
func RenameNoReplace(src, dst string) error { return Plain().RenameNoReplace(src, dst) }

func (f Files) WriteAtomic(path string, data []byte) error {
	tmp, err := f.WriteTemp(path, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(filepath.Dir(path))
}

func (f Files) WriteNew(path string, data []byte) error {
	tmp, err := f.WriteTemp(path, data)
	if err != nil {
		return err
	}
	if err := f.RenameNoReplace(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func (fs Files) WriteTemp(path string, data []byte) (string, error) {
	return fs.WriteTempFrom(path, data, false)
}

// WriteTempFrom is writeTemp that, with spare, writes into one of the
// folder's spares when it has one (see spares.go): only a caller that
// keeps its temp's name as a spare afterwards (swapIn) takes one.
func (fs Files) WriteTempFrom(path string, data []byte, spare bool) (string, error) {
	if err := fs.GuardDir(filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	tmp, f, ok, had := "", (*os.File)(nil), false, int64(0)
	if spare {
		tmp, f, had, ok = fs.Spares.Take(filepath.Dir(path))
	}
	if !ok {
		tmp = TempName(path, fs.Tag)
		var err error
		if f, err = CreateExcl(tmp); err != nil {
			return "", fmt.Errorf("write %s: %w", path, err)
		}
	}
	_, err := f.Write(data)
	if err == nil && had > int64(len(data)) {
		err = f.Truncate(int64(len(data))) // a spare's older, longer version
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fs.Spares.Forget(tmp)
		os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return tmp, nil
}

func (f Files) RenameNoReplace(src, dst string) error {
	if err := f.GuardedRename(src, dst); err != nil {
		return &os.LinkError{Op: "move", Old: src, New: dst, Err: UnwrapLink(err)}
	}
	if filepath.Dir(src) != filepath.Dir(dst) {
		return SyncDirs(filepath.Dir(dst), filepath.Dir(src))
	}
	return SyncDir(filepath.Dir(dst))
}

func UnwrapLink(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// linkRename is the portable no-replace move: link fails if dst exists;
// then unlink the source. If two movers race, the second link fails with
// EEXIST, or its source is gone: ENOENT.
func linkRename(src, dst string) error {
	if err := os.Link(src, dst); err != nil {
		return err
	}
	if err := os.Remove(src); err != nil {
		// Both names now point at one inode; undo the new one so the
		// file stays where it was rather than in two folders.
		os.Remove(dst)
		return err
	}
	return nil
}

// ReadRegular reads a file that must be a regular file of at most max
// bytes, without following a symlink at its last component, and returns
// its content and info. Errors are one-line reasons fit for a user.
// A file with more than one hard link is refused: it is how a drop would
// expose a file from outside the spool.
func ReadRegular(path string, max int64) ([]byte, os.FileInfo, error) {
	return readRegular(path, max, true)
}

// ReadOwn is ReadRegular for files in spoolgate's own folders, without the
// link-count check. Where RENAME_NOREPLACE is missing (FUSE, NFS, SMB) a
// move is link-then-unlink, and the client's attribute cache goes on
// reporting two links for a while after the unlink: a claimed task would
// read as "2 hard links" and never run. Drops are checked at intake.
func ReadOwn(path string, max int64) ([]byte, os.FileInfo, error) {
	return readRegular(path, max, false)
}

// OpenOwn opens a file of spoolgate's own folders as ReadOwn reads it
// (never through a link at its last component, never a fifo or a device,
// at most max bytes by its size), for a reader that streams it instead of
// holding it whole. The caller closes it and reads at most max bytes.
func OpenOwn(path string, max int64) (*os.File, os.FileInfo, error) {
	return openRegular(path, max, false)
}

func openRegular(path string, max int64, checkLinks bool) (*os.File, os.FileInfo, error) {
	f, err := OpenNoFollow(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, err
		}
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, fi, fmt.Errorf("not a regular file (%s)", KindOf(fi.Mode()))
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file (%s)", KindOf(fi.Mode()))
	} else if err == nil && checkLinks && linkCount(fi) > 1 {
		err = &LinkedError{linkCount(fi)}
	}
	if err == nil && fi.Size() > max {
		err = fmt.Errorf("file is %d bytes, over the %d byte limit", fi.Size(), max)
	}
	if err != nil {
		f.Close()
		return nil, fi, err
	}
	return f, fi, nil
}

func readRegular(path string, max int64, checkLinks bool) ([]byte, os.FileInfo, error) {
	f, fi, err := openRegular(path, max, checkLinks)
	if err != nil {
		return nil, fi, err
	}
	defer f.Close()
	data, err := readSized(f, fi.Size(), max)
	if err != nil {
		return nil, fi, err
	}
	if int64(len(data)) > max {
		return nil, fi, fmt.Errorf("file grew past the %d byte limit while read", max)
	}
	return data, fi, nil
}

// readSized reads f, whose size was size, up to max+1 bytes: into one
// buffer of its size (io.ReadAll's doubling would copy a large record
// twice and allocate three times its size), growing only if it grew.
func readSized(f *os.File, size, max int64) ([]byte, error) {
	data := make([]byte, min(size, max)+1)
	n, err := io.ReadFull(f, data)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return data[:n], nil
	}
	if err != nil {
		return nil, err
	}
	rest, err := io.ReadAll(io.LimitReader(f, max+1-int64(n)))
	return append(data, rest...), err
}

func KindOf(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "symlink"
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "fifo"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// now is the clock; tests may not replace it, but one place reads it.
func now() time.Time { return time.Now().UTC() }

// SyncDirs fsyncs the folders at once. Each fsync waits for the file
// system's journal commit; issued together, the fsyncs of two folders of
// one file system share a commit, so a move (two folders) or an intake
// (pending/ and the drop box) costs one commit's wait, not two. It returns
// the first error.
func SyncDirs(dirs ...string) error {
	switch len(dirs) {
	case 0:
		return nil
	case 1:
		return SyncDir(dirs[0])
	}
	errs := make(chan error, len(dirs)-1)
	for _, d := range dirs[1:] {
		go func() { errs <- SyncDir(d) }()
	}
	err := SyncDir(dirs[0])
	for range dirs[1:] {
		if e := <-errs; err == nil {
			err = e
		}
	}
	return err
}
