//go:build linux

package fsx

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/spoolgate/spoolgate/internal/testkit"
)

// startSleep starts a child that lives until killed; the test reaps it.
func startSleep(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// waitZombie waits until the killed child is a zombie its parent has not
// reaped yet.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	testkit.Wait(t, fmt.Sprintf("pid %d to become a zombie", pid), 5*time.Second, func() bool {
		p, err := process.NewProcess(int32(pid))
		if err != nil {
			return false
		}
		st, err := p.Status()
		return err == nil && slices.Contains(st, process.Zombie)
	})
}

func TestProcessLiveness(t *testing.T) {
	tests := []struct {
		name string
		pid  func(t *testing.T) int
		want Liveness
	}{
		{"this process", func(*testing.T) int { return os.Getpid() }, Alive},
		{"a running child", func(t *testing.T) int { return startSleep(t).Process.Pid }, Alive},
		{"no pid", func(*testing.T) int { return 0 }, Gone},
		{"a reaped child", func(t *testing.T) int {
			cmd := startSleep(t)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return cmd.Process.Pid
		}, Gone},
		{"a zombie", func(t *testing.T) int {
			cmd := startSleep(t)
			_ = cmd.Process.Kill()
			waitZombie(t, cmd.Process.Pid)
			return cmd.Process.Pid
		}, Gone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ProcessLiveness(tc.pid(t)); got != tc.want {
				t.Fatalf("ProcessLiveness = %v, want %v", got, tc.want)
			}
		})
	}
}

// A zombie reaped after liveness found it running and before it read its
// state is gone: CI once saw a killed leftover browser, reaped by its
// parent in that window, named as the holder of the profile's lock.
func TestProcessLiveness_ReapedBetweenReads(t *testing.T) {
	cmd := startSleep(t)
	_ = cmd.Process.Kill()
	waitZombie(t, cmd.Process.Pid)
	orig := procStatus
	t.Cleanup(func() { procStatus = orig })
	reaped := false
	procStatus = func(p *process.Process) ([]string, error) {
		if !reaped {
			reaped = true
			_ = cmd.Wait()
		}
		return orig(p)
	}
	if got := ProcessLiveness(cmd.Process.Pid); got != Gone {
		t.Fatalf("ProcessLiveness = %v, want Gone", got)
	}
	if !reaped {
		t.Fatal("liveness never read the state: the test did not reach the window")
	}
}
