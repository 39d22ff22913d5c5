//go:build !linux

package main

import "errors"

// markTopdir is ext4's, on Linux only.
func markTopdir(string) error { return errors.ErrUnsupported }
