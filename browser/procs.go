package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/process"
	"github.com/spoolgate/spoolgate/internal/fsx"
)

// userDataDirArg is the flag that names a Chromium profile. Chromium passes
// it on to every child (zygote, renderer, GPU, network service), so it
// finds a whole browser tree by command line.
const userDataDirArg = "--user-data-dir="

// samePath compares two cleaned paths, ignoring case on Windows.
func samePath(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// namesProfile reports whether a command line runs a browser on profile:
// one of its arguments is --user-data-dir=PROFILE. Matching the flag, not
// any mention of the path, keeps an editor or a shell that merely names the
// folder out of reach of the kill.
func namesProfile(args []string, profile string) bool {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, userDataDirArg); ok && samePath(strings.Trim(v, `"'`), profile) {
			return true
		}
	}
	return false
}

// profileProcs returns the live processes, other than this one, whose
// command line runs a browser on profile.
func profileProcs(profile string) ([]*process.Process, error) {
	ps, err := process.Processes()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	self := int32(os.Getpid())
	var out []*process.Process
	for _, p := range ps {
		if p.Pid == self || !alive(p) {
			continue
		}
		args, err := p.CmdlineSlice()
		if err != nil || !namesProfile(args, profile) {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// alive reports whether p still runs (see fsx.ProcessLiveness: a zombie
// holds nothing and counts as gone).
func alive(p *process.Process) bool { return fsx.ProcessAlive(p) }

// pidAlive is alive for a bare pid: alive unless surely gone.
func pidAlive(pid int32) bool { return fsx.ProcessLiveness(int(pid)) != fsx.Gone }

// describe names a process for logs and hints: "pid N (name, command line)".
func describe(p *process.Process) string {
	name, _ := p.Name()
	cmd, _ := p.Cmdline()
	if len(cmd) > 300 {
		cmd = cmd[:300] + "..."
	}
	if name == "" {
		name = "?"
	}
	return fmt.Sprintf("pid %d (%s, %s)", p.Pid, name, cmd)
}

// tree returns p and all its descendants, parents first.
func tree(p *process.Process) []*process.Process {
	out := []*process.Process{p}
	seen := map[int32]bool{p.Pid: true}
	for i := 0; i < len(out); i++ {
		kids, err := out[i].Children()
		if err != nil {
			continue
		}
		for _, k := range kids {
			if !seen[k.Pid] {
				seen[k.Pid] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// killTree kills p and every descendant, collected before the first kill
// so that no child escapes by being re-parented. It returns the pids it
// sent a kill to.
func killTree(p *process.Process) []int32 {
	procs := tree(p)
	var pids []int32
	for _, q := range procs {
		if q.Pid == int32(os.Getpid()) {
			continue // never ourselves
		}
		_ = q.Kill()
		pids = append(pids, q.Pid)
	}
	return pids
}

// waitGone waits up to d for every pid to end and returns those still alive.
func waitGone(pids []int32, d time.Duration) []int32 {
	deadline := time.Now().Add(d)
	for {
		var left []int32
		for _, pid := range pids {
			if pidAlive(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}
