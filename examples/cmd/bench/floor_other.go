//go:build !linux

package main

import "os"

// exchange moves the spare over path; the next put creates a new spare.
func exchange(spare, path string) error { return os.Rename(spare, path) }
