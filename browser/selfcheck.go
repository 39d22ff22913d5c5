package browser

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/net"
	"github.com/shirou/gopsutil/v4/process"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// devToolsPortFile is where a Chromium started with a debugging port writes
// that port, in its profile.
const devToolsPortFile = "DevToolsActivePort"

// killWait is how long the self-check waits for a killed tree to vanish.
const killWait = 3 * time.Second

// SelfCheck is the environment self-check before each web task: it finds
// what earlier runs left behind on this instance's profile, kills it, and
// writes what it found and did into log ("self-check: clean" when nothing).
//
// What counts as ours:
//   - every process whose command line runs a browser on our profile
//     (--user-data-dir=PROFILE), with its whole process tree. Chromium
//     passes that flag to each child, so this finds the browser that "looked
//     closed" and its helpers; no other program has that argument.
//   - the DevTools port. spoolgate talks to its browser over a pipe
//     (--remote-debugging-pipe), so its own browser listens on no port and
//     there is no fixed port to collide on. A browser that was started on
//     our profile with a port (another tool, a manual debug run) writes it
//     to PROFILE/DevToolsActivePort; the self-check reads that file and
//     looks up the listener. The listener is killed only when it is ours
//     by the rule above; a foreign listener is reported and left alone.
//
// A process that merely holds the profile's SingletonLock is not killed
// here: that is the single-instance check's environment error.
//
// It returns an environment error only when something of ours survives the
// kill.
func SelfCheck(profile string, log *slog.Logger) error {
	start := time.Now()
	procs, err := profileProcs(profile)
	if err != nil {
		return attempt.Errorf(taskfile.ClassEnvironment, "self-check: %w", err)
	}
	roots := treeRoots(procs)
	found := 0
	var killed []int32
	for _, p := range roots {
		desc := describe(p)
		pids := killTree(p)
		found += len(pids)
		killed = append(killed, pids...)
		log.Warn("self-check: found leftover browser on our profile; killed its tree", "process", desc, "pids", pids)
	}
	portNote := checkDevToolsPort(profile, log)
	if portNote != "" {
		found++
	}
	if len(killed) > 0 {
		if left := waitGone(killed, killWait); len(left) > 0 {
			return attempt.Errorf(taskfile.ClassEnvironment, "self-check: processes %v on profile %s survived the kill", left, profile)
		}
		log.Info("self-check: leftovers gone", "pids", killed)
	}
	if found == 0 {
		log.Info("self-check: clean", "profile", profile, "took", time.Since(start).Round(time.Millisecond))
	} else {
		log.Info("self-check: done", "profile", profile, "killed", len(killed), "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// treeRoots keeps the processes whose parent is not also in the list, so
// each tree is killed once from its top.
func treeRoots(procs []*process.Process) []*process.Process {
	in := map[int32]bool{}
	for _, p := range procs {
		in[p.Pid] = true
	}
	var roots []*process.Process
	for _, p := range procs {
		if pp, err := p.Ppid(); err == nil && in[pp] {
			continue
		}
		roots = append(roots, p)
	}
	return roots
}

// checkDevToolsPort handles PROFILE/DevToolsActivePort: it reports a live
// listener on that port (killing it only if it runs on our profile) and
// removes the file once nothing of ours listens there. It returns a note of
// what it found, "" when the file is absent or stale with no listener.
func checkDevToolsPort(profile string, log *slog.Logger) string {
	path := filepath.Join(profile, devToolsPortFile)
	port, err := readPortFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		log.Warn("self-check: unreadable "+devToolsPortFile+"; removed", "err", err)
		_ = os.Remove(path)
		return ""
	}
	conns, err := net.Connections("tcp")
	if err != nil {
		log.Warn("self-check: cannot list listening ports", "err", err)
		return ""
	}
	note := ""
	for _, c := range conns {
		if c.Status != "LISTEN" || c.Laddr.Port != port || c.Pid == 0 {
			continue
		}
		p, err := process.NewProcess(c.Pid)
		if err != nil || !alive(p) {
			continue
		}
		args, _ := p.CmdlineSlice()
		if namesProfile(args, profile) {
			pids := killTree(p)
			note = fmt.Sprintf("DevTools port %d held by our %s: killed", port, describe(p))
			log.Warn("self-check: "+note, "pids", pids)
			if left := waitGone(pids, killWait); len(left) > 0 {
				log.Error("self-check: port holder survived the kill", "pids", left)
			}
			continue
		}
		note = fmt.Sprintf("DevTools port %d (from our %s) is held by %s, not a browser on our profile: left alone", port, devToolsPortFile, describe(p))
		log.Warn("self-check: " + note)
		return note // keep the file: it is not ours to clean up
	}
	_ = os.Remove(path)
	if note == "" {
		log.Info("self-check: removed stale "+devToolsPortFile, "port", port)
	}
	return note
}

// readPortFile reads the first line of DevToolsActivePort: the port.
func readPortFile(path string) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, fmt.Errorf("%s is empty", path)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(sc.Text()), 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%s: bad port %q", path, sc.Text())
	}
	return uint32(n), nil
}
