//go:build unix && !linux

package browser

import (
	"os/exec"
	"syscall"
)

// setProcAttr starts the browser in its own process group, so the whole
// tree can be ended with one signal.
func setProcAttr(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killGroup kills the process group that setProcAttr made for pid.
func killGroup(pid int) {
	if pid > 1 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
