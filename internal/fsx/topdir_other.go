//go:build !linux

package fsx

import "errors"

// MarkTopdir is ext4's, on Linux only.
func MarkTopdir(string) error { return errors.ErrUnsupported }
