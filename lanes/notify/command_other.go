//go:build !unix

package notify

import "os/exec"

// ownGroup: outside Unix the context's cancel kills the process alone.
func ownGroup(cmd *exec.Cmd) {}
