package fsx

import (
	"errors"

	"golang.org/x/sys/unix"
)

// RawNoReplace is renameat2(RENAME_NOREPLACE) alone, without the
// link+unlink fallback: the probe wants to know which one works.
func RawNoReplace(src, dst string) error {
	err := unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EEXIST) {
		return ErrExistRaw
	}
	return ErrName(err)
}

// RawExchange is renameat2(RENAME_EXCHANGE): the two names swap files.
func RawExchange(a, b string) error {
	return ErrName(unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE))
}

// ErrName gives an errno its symbolic name too (EINVAL, EPERM): what an
// operator searches for.
func ErrName(err error) error {
	var en unix.Errno
	if errors.As(err, &en) {
		return &namedErrno{en}
	}
	return err
}

type namedErrno struct{ unix.Errno }

func (e *namedErrno) Error() string { return unix.ErrnoName(e.Errno) + ": " + e.Errno.Error() }
func (e *namedErrno) Unwrap() error { return e.Errno }
