//go:build linux

package fsx

import (
	"os/exec"
	"syscall"
)

// OwnGroup makes cmd start in a process group of its own, so KillGroup
// ends its whole tree with one signal; with dieWithUs the kernel also
// kills it if the thread that started it goes away (chromedp locks one
// for its browser).
func OwnGroup(cmd *exec.Cmd, dieWithUs bool) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if dieWithUs {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
}
