package fsx

import (
	"errors"
	"slices"

	"github.com/shirou/gopsutil/v4/process"
)

// Liveness is what this machine can tell of a process.
type Liveness int

const (
	// Unsure: the OS could not say (a permission error, an unreadable
	// /proc). Every caller treats it as alive: never steal a live task,
	// never report a live holder gone, never call a browser closed.
	Unsure Liveness = iota
	// Alive: the process exists and is not a zombie.
	Alive
	// Gone: no such process, or a zombie waiting for its parent to reap it
	// (a zombie holds nothing: no lock, no port, no profile).
	Gone
)

// ProcessLiveness tells whether pid runs on this machine: the one answer
// for a task's owner, a lock's holder and a browser's processes.
func ProcessLiveness(pid int) Liveness {
	if pid <= 0 {
		return Gone
	}
	p, err := process.NewProcess(int32(pid))
	if errors.Is(err, process.ErrorProcessNotRunning) {
		return Gone
	}
	if err != nil {
		return Unsure
	}
	return liveness(p)
}

// ProcessGone reports whether pid is surely gone (not Unsure).
func ProcessGone(pid int) bool { return ProcessLiveness(pid) == Gone }

func liveness(p *process.Process) Liveness {
	ok, err := p.IsRunning()
	switch {
	case err != nil:
		// It may have ended since it was looked up: ask once more.
		if vanished(p) {
			return Gone
		}
		return Unsure
	case !ok:
		return Gone
	}
	st, err := procStatus(p)
	if err != nil {
		// A zombie reaped between the two reads leaves no /proc entry to
		// read: that is gone, not alive (CI saw a killed leftover browser,
		// reaped by its parent just then, reported as the profile's holder).
		if vanished(p) {
			return Gone
		}
		return Alive
	}
	if slices.Contains(st, process.Zombie) {
		return Gone
	}
	return Alive
}

// vanished reports whether p's pid surely no longer exists: the second
// look liveness takes when a read of p fails.
func vanished(p *process.Process) bool {
	exists, err := process.PidExists(p.Pid)
	return err == nil && !exists
}

// procStatus reads a process's state; a variable so that a test can reap
// the process between liveness's two reads, the interleaving CI once hit.
var procStatus = (*process.Process).Status

// ProcessAlive is ProcessLiveness for a process already looked up (a
// browser found by its command line): alive unless surely gone.
func ProcessAlive(p *process.Process) bool { return liveness(p) != Gone }
