//go:build unix && !linux

package fsx

import (
	"os/exec"
	"syscall"
)

// OwnGroup makes cmd start in a process group of its own, so KillGroup
// ends its whole tree with one signal (dieWithUs is Linux's alone).
func OwnGroup(cmd *exec.Cmd, dieWithUs bool) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}
