//go:build unix && !linux

package fsx

import "syscall"

// dieWithParent: the BSDs and macOS have no parent-death signal; the
// group kill at close is what ends the browser there.
func dieWithParent(*syscall.SysProcAttr) {}
