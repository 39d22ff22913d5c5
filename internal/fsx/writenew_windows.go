package fsx

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// WriteBeneathNew: see writenew_unix.go. Windows has no exchange of two
// names: a file accepted by mayReplace is replaced by a rename checked a
// moment before.
func WriteBeneathNew(root, rel string, data []byte, tag string, mayReplace func(sum string) bool) error {
	r, name, tmp, err := stageBeneath(root, rel, data, tag)
	if err != nil {
		return err
	}
	defer r.Close()
	defer r.Remove(tmp)
	err = r.Link(tmp, name) // fails if name exists: the no-replace move
	if err == nil || !errors.Is(err, os.ErrExist) {
		return err
	}
	path := filepath.Join(root, name)
	old, err := r.Open(name)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(h, old)
	old.Close()
	if err != nil {
		return err
	}
	if mayReplace == nil || !mayReplace(hex.EncodeToString(h.Sum(nil))) {
		return &TakenError{Path: path}
	}
	return r.Rename(tmp, name)
}
