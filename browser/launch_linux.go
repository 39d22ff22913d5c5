//go:build linux

package browser

import (
	"os/exec"
	"syscall"
)

// setProcAttr starts the browser in its own process group, so the whole
// tree can be ended with one signal, and asks the kernel to kill it if the
// thread that started it (chromedp locks one for this) goes away with us.
func setProcAttr(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// killGroup kills the process group that setProcAttr made for pid.
func killGroup(pid int) {
	if pid > 1 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
