//go:build !linux

package fsx

import "errors"

// Elsewhere the no-replace move is the platform's own (MoveFileEx without
// replace on Windows, link+unlink on other unixes: probed as hard links).
func RawNoReplace(src, dst string) error {
	if err := renameNoReplace(src, dst); err != nil {
		if errors.Is(err, ErrExists) {
			return ErrExistRaw
		}
		return err
	}
	return nil
}

func RawExchange(a, b string) error { return ErrNoExchange }

func ErrName(err error) error { return err }
