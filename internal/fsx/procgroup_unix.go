//go:build unix

package fsx

import (
	"os/exec"
	"syscall"
)

// OwnGroup makes cmd start in a process group of its own, so KillGroup
// ends its whole tree with one signal; with dieWithUs the kernel also
// kills it if the thread that started it goes away (chromedp locks one
// for its browser; Linux alone offers this: dieWithParent).
func OwnGroup(cmd *exec.Cmd, dieWithUs bool) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if dieWithUs {
		dieWithParent(cmd.SysProcAttr)
	}
}

// KillGroup kills the process group OwnGroup made for pid and reports
// whether it could send the signal at all.
func KillGroup(pid int) bool {
	return pid > 1 && syscall.Kill(-pid, syscall.SIGKILL) == nil
}
