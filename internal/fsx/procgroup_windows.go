//go:build windows

package fsx

import (
	"os/exec"
	"syscall"
)

// OwnGroup starts cmd in a new process group. Windows has no group kill
// signal: KillGroup does nothing and a caller ends the tree by walking its
// children.
func OwnGroup(cmd *exec.Cmd, dieWithUs bool) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= syscall.CREATE_NEW_PROCESS_GROUP
}

// KillGroup cannot kill a group on Windows; see OwnGroup.
func KillGroup(pid int) bool { return false }
