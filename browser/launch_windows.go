//go:build windows

package browser

import (
	"os/exec"
	"syscall"
)

// setProcAttr starts the browser in a new process group. Windows has no
// group kill signal; killTree ends the tree by walking its children, which
// Chromium's helpers are.
func setProcAttr(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= syscall.CREATE_NEW_PROCESS_GROUP
}

// killGroup does nothing on Windows; see setProcAttr.
func killGroup(pid int) {}
