package testkit

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// DeadPid returns the pid of a process that ran and was reaped: gone, as
// a crashed owner's is (skips where there is no `true` to run).
func DeadPid(t testing.TB) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` to run:", err)
	}
	return cmd.Process.Pid
}

// OwnTemps lists the names in dir that look like spoolgate's temp files
// (".sg-" names; fsx.IsOwnTemp is the exact rule).
func OwnTemps(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".sg-") {
			out = append(out, e.Name())
		}
	}
	return out
}
