//go:build !linux

package spool

import "errors"

// Elsewhere the no-replace move is the platform's own (MoveFileEx without
// replace on Windows, link+unlink on other unixes: probed as hard links).
func rawNoReplace(src, dst string) error {
	if err := renameNoReplace(src, dst); err != nil {
		if errors.Is(err, ErrExists) {
			return errExistRaw
		}
		return err
	}
	return nil
}

func rawExchange(a, b string) error { return errNoExchange }

func errName(err error) error { return err }
