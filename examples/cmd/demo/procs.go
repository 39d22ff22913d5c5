package main

import (
	"os"
	"os/exec"
	"strings"
	"time"
)

// leftovers waits up to d for every process whose command line names
// profile (pgrep -f, as an operator would look) to be gone, and returns
// those that remain, each with its command line.
func leftovers(profile string, d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		out, err := exec.Command("pgrep", "-f", profile).Output()
		pids := strings.Fields(string(out))
		if err != nil && len(pids) == 0 {
			return nil // exit 1: nothing matched (or no pgrep: nothing to check with)
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var left []string
			for _, p := range pids {
				cmd, _ := os.ReadFile("/proc/" + p + "/cmdline")
				left = append(left, p+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
			}
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}
