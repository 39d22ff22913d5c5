//go:build unix

package fsx

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/spoolgate/spoolgate/internal/dirsync"
)

// WriteBeneathNew is WriteBeneath that never replaces a file it may not:
// the temp file is moved into place without replacing anything
// (RENAME_NOREPLACE, or link-then-unlink where that is missing). If the
// name is taken, the file there is replaced only when mayReplace (nil:
// never) accepts the hex SHA-256 of its bytes, and then by an exchange of
// the two names whose swapped-out file is checked again, so a file put
// there between the check and the swap is put back, never lost. Refused,
// it returns a *TakenError (matching os.ErrExist).
func WriteBeneathNew(root, rel string, data []byte, tag string, mayReplace func(sum string) bool) error {
	st, err := stageBeneath(root, rel, data, tag)
	if err != nil {
		return err
	}
	defer unix.Close(st.dfd)
	defer unix.Unlinkat(st.dfd, st.tmp, 0) // gone once moved; the old file after an exchange
	err = renameNoReplaceAt(st.dfd, st.tmp, st.name)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		err = unix.Linkat(st.dfd, st.tmp, st.dfd, st.name, 0) // the portable no-replace move (linkRename)
	}
	if errors.Is(err, unix.EEXIST) {
		err = replaceOwned(st.dfd, st.tmp, st.name, st.path, mayReplace)
	}
	if err != nil {
		var te *TakenError
		if errors.As(err, &te) {
			return err
		}
		return &os.PathError{Op: "write", Path: st.path, Err: err}
	}
	if err := dirsync.FD(st.dfd); err != nil {
		return &os.PathError{Op: "sync", Path: st.dir, Err: err}
	}
	return nil
}

// replaceOwned swaps tmp in for name if mayReplace accepts name's bytes;
// the file swapped out (now at tmp) must still be the one accepted, else
// it is swapped back and the write refused.
func replaceOwned(dfd int, tmp, name, path string, mayReplace func(string) bool) error {
	sum, err := sumAt(dfd, name, path)
	if err != nil {
		return err
	}
	if mayReplace == nil || !mayReplace(sum) {
		return &TakenError{Path: path}
	}
	err = renameExchangeAt(dfd, tmp, name)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		// No exchange here (older NFS, some FUSE): a plain replace,
		// checked a moment before.
		return unix.Renameat(dfd, tmp, dfd, name)
	}
	if err != nil {
		return err
	}
	if was, err := sumAt(dfd, tmp, path); err != nil || was != sum {
		_ = renameExchangeAt(dfd, tmp, name) // put back what came in between
		return &TakenError{Path: path}
	}
	return nil
}

// sumAt is the hex SHA-256 of the regular file name in the folder dfd.
func sumAt(dfd int, name, path string) (string, error) {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|safeFlags, 0)
	if err != nil {
		return "", refusal("open", path, err, WantFile)
	}
	if err := checkFd(fd, path, WantFile); err != nil {
		return "", err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
