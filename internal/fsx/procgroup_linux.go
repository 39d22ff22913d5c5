//go:build linux

package fsx

import "syscall"

// dieWithParent asks the kernel to SIGKILL the child when the thread that
// started it goes away.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
