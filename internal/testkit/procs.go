package testkit

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Pgrep lists the pids whose command line contains s as a whole path (s
// followed by a space, a slash or the end: a profile's processes and
// those of folders beneath it, never those of a sibling whose name s
// begins, e2e-a2 for e2e), as an operator's `pgrep -f` would (which is
// how they look for what spoolgate left behind), leaving out pgrep
// itself.
func Pgrep(t testing.TB, s string) []string {
	t.Helper()
	out, err := exec.Command("pgrep", "-f", regexp.QuoteMeta(s)+"([ /]|$)").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return nil
		}
		t.Fatalf("pgrep -f %s: %v", s, err)
	}
	return strings.Fields(string(out))
}

// NoProcs waits up to 5 s (a process just killed takes a moment to be
// reaped) until no process's command line names s (a browser profile),
// and fails naming each one left, with its command line and state.
func NoProcs(t testing.TB, s string) {
	t.Helper()
	var pids []string
	if Until(5*time.Second, func() bool { pids = Pgrep(t, s); return len(pids) == 0 }) {
		return
	}
	for _, p := range pids {
		cmd, _ := os.ReadFile("/proc/" + p + "/cmdline")
		stat, _ := os.ReadFile("/proc/" + p + "/stat")
		t.Errorf("process %s on %s remains: %s (stat %s)", p, s, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}), stat)
	}
}
