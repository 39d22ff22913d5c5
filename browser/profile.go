package browser

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// ProfileDir is the first web session's browser profile: by default
// <web.profiles>/<web.instance>, the one profile of every install before
// accounts (see config.Config.WebSessions). It is never a temporary folder:
// the login lives there.
func ProfileDir(cfg *config.Config) string {
	if ss := cfg.WebSessions(); len(ss) > 0 {
		return ss[0].Profile
	}
	return filepath.Join(cfg.Web.Profiles, cfg.Web.Instance)
}

// ensureProfile creates the profile folder with mode 0700 (it holds the
// session cookies) and tightens it if it exists with looser rights.
func ensureProfile(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create profile %s: %w", dir, err)
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm() != 0o700 {
			if err := os.Chmod(dir, 0o700); err != nil {
				return fmt.Errorf("profile %s: %w", dir, err)
			}
		}
	}
	return nil
}

// Chromium's single-instance markers in a profile. On Linux SingletonLock
// is a symlink whose target is "HOST-PID" (SingletonSocket and
// SingletonCookie go with it); on Windows the running browser holds the
// file "lockfile" open without sharing.
const (
	singletonLock   = "SingletonLock"
	singletonSocket = "SingletonSocket"
	singletonCookie = "SingletonCookie"
	windowsLockfile = "lockfile"
)

// readSingletonLock parses the SingletonLock symlink: host and pid, and
// ok=false when there is no lock.
func readSingletonLock(dir string) (host string, pid int32, ok bool, err error) {
	target, err := os.Readlink(filepath.Join(dir, singletonLock))
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, true, fmt.Errorf("read %s: %w", singletonLock, err)
	}
	i := strings.LastIndex(target, "-") // the host name may hold dashes
	if i < 0 {
		return target, 0, true, nil
	}
	n, _ := strconv.Atoi(target[i+1:])
	return target[:i], int32(n), true, nil
}

// checkSingleInstance is the single-instance check before a launch. If a
// live process holds the profile, it returns an environment *TaskError with
// a hint for the operator and touches nothing. A stale lock is removed.
//
// A lock is stale when it names this host and its pid is dead, or the pid
// now belongs to a process younger than the lock (the pid was reused, so it
// is not the browser that wrote it). A live process at least as old as the
// lock holds it, browser or not: we cannot know what it is doing with the
// profile, and it is not ours to kill. A lock from another host (a profile
// on a shared disk) is never judged stale from here.
func checkSingleInstance(dir string, log *slog.Logger) error {
	if runtime.GOOS == "windows" {
		return checkWindowsLockfile(dir, log)
	}
	host, pid, ok, err := readSingletonLock(dir)
	if err != nil {
		return attempt.Errorf(taskfile.ClassEnvironment, "profile %s: %w", dir, err)
	}
	if !ok {
		return nil
	}
	me, _ := os.Hostname()
	if host != me {
		return inUse(dir, fmt.Sprintf("a browser on host %s (pid %d)", host, pid), log)
	}
	if holder := lockHolder(dir, pid); holder != nil {
		return inUse(dir, describe(holder), log)
	}
	for _, n := range []string{singletonLock, singletonSocket, singletonCookie} {
		_ = os.Remove(filepath.Join(dir, n))
	}
	log.Info("single-instance check: removed stale profile lock", "profile", dir, "pid", pid)
	return nil
}

// lockHolder returns the live process that holds a SingletonLock naming
// pid, or nil when the lock is stale.
func lockHolder(dir string, pid int32) *process.Process {
	if pid <= 0 {
		return nil
	}
	p, err := process.NewProcess(pid)
	if err != nil || !alive(p) {
		return nil
	}
	fi, err := os.Lstat(filepath.Join(dir, singletonLock))
	if err != nil {
		return p
	}
	created, err := p.CreateTime() // ms since the epoch, 10 ms steps on Linux
	if err == nil && created > fi.ModTime().UnixMilli()+1 {
		return nil // started after the lock was written: a reused pid
	}
	return p
}

func checkWindowsLockfile(dir string, log *slog.Logger) error {
	p := filepath.Join(dir, windowsLockfile)
	err := os.Remove(p)
	if err == nil {
		log.Info("single-instance check: removed stale profile lock", "profile", dir)
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return inUse(dir, "a process that holds "+windowsLockfile+" open", log)
}

// inUse builds the environment error, and logs its hint into the job log.
func inUse(dir, who string, log *slog.Logger) error {
	msg := fmt.Sprintf("profile %s is in use by %s; another tool or spoolgate instance uses it: close it or give this instance its own web.instance", dir, who)
	log.Error("single-instance check: " + msg)
	return attempt.Errorf(taskfile.ClassEnvironment, "%s", msg)
}
