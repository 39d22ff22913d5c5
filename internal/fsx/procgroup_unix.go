//go:build unix

package fsx

import "syscall"

// KillGroup kills the process group OwnGroup made for pid and reports
// whether it could send the signal at all.
func KillGroup(pid int) bool {
	return pid > 1 && syscall.Kill(-pid, syscall.SIGKILL) == nil
}
