package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/gofrs/flock"
	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/config"
)

// Web exclusivity: one logged-in chat session admits one generation at a
// time (the field report tried pools of 8 and 16: the page errored and the
// sessions overwrote each other). Which layer guarantees it:
//
// The guarantee is RunnerLock. A web attempt runs only inside
// RunnerLock.Run, which needs both halves of the session's lock:
//   - the OS file lock on <web.profiles>/web-runner-<h>.lock, taken by
//     TryLock and held by the web lane for as long as it claims: it
//     excludes every other spoolgate of the same user on this machine
//     (and every other handle on the file in this process);
//   - the session's process-wide mutex, one per lock file: it excludes
//     every other goroutine of this process, whatever the file lock's
//     semantics on the platform or file system.
//
// Defence in depth, not the guarantee: the web lane's one slot
// (WebConcurrency, a constant), so it never claims a task it would then
// hold waiting; and the browser executor's TryLock, which refuses an
// overlapping call on one executor as transient.
//
// The lock is per machine, user and session: each web session (one
// account in one profile, see Config.WebSessions) is one RunnerLock on its
// own file, with its own mutex. Across hosts sharing a spool, the
// account's lease (AccountLease) keeps one account on one host.

// ErrLockHeld is returned by TryLock when another process holds the lock,
// and by Run when this one does not.
var ErrLockHeld = errors.New("web runner lock is held by another process")

// RunnerLock is one chat session's lock (see the guarantee above). The
// file holds "pid host" of the holder, for status and for whoever stands
// by.
type RunnerLock struct {
	path string
	fl   *flock.Flock
	mu   *sync.Mutex // the session's process-wide mutex
}

// sessionMus holds one mutex per lock file, for the whole process.
var sessionMus sync.Map // path -> *sync.Mutex

// NewRunnerLock returns the first web session's lock in profiles; it takes
// nothing.
func NewRunnerLock(profiles string) *RunnerLock {
	return OpenRunnerLock(config.RunnerLockPath(profiles))
}

// OpenRunnerLock returns the session lock at path (WebSession.Lock); it
// takes nothing.
func OpenRunnerLock(p string) *RunnerLock {
	mu, _ := sessionMus.LoadOrStore(filepath.Clean(p), new(sync.Mutex))
	// Opened without following a symlink and without blocking on a fifo
	// put in the lock's place; TryLock then refuses what is not a file.
	fl := flock.New(p, flock.SetFlag(os.O_CREATE|os.O_RDONLY|fsx.NoFollowFlags), flock.SetPermissions(0o600))
	return &RunnerLock{path: p, fl: fl, mu: mu.(*sync.Mutex)}
}

// Path is the lock file.
func (l *RunnerLock) Path() string { return l.path }

// Held reports whether this RunnerLock holds the OS lock.
func (l *RunnerLock) Held() bool { return l.fl.Locked() }

// TryLock takes the OS lock without waiting and writes our pid and host
// into it. It returns ErrLockHeld (wrapped, naming the holder) if it is
// taken.
func (l *RunnerLock) TryLock(host string) error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("web lock: %w", err)
	}
	ok, err := l.fl.TryLock()
	if err != nil {
		return fmt.Errorf("web lock %s: %w", l.path, err)
	}
	if !ok {
		return fmt.Errorf("%w: %s (%s)", ErrLockHeld, l.path, l.Holder())
	}
	if fi, err := l.fl.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = l.fl.Unlock()
		if err == nil {
			err = &fsx.NotRegularError{Path: l.path, Kind: fsx.KindName(fi.Mode()), Want: fsx.WantFile}
		}
		return fmt.Errorf("web lock: %w", err)
	}
	heldHere.Store(filepath.Clean(l.path), l)
	// Rewrite the content in place through a second handle, not by rename,
	// which would swap the locked inode for an unlocked one. (On Windows the
	// locked range refuses the second handle; the holder is then unknown.)
	l.writeContent(fmt.Sprintf("%d %s\n", os.Getpid(), host))
	return nil
}

// Run enters the session for one attempt: it waits for the session's
// process-wide mutex and checks that this RunnerLock holds the OS lock.
// Call release when the attempt has ended.
func (l *RunnerLock) Run() (release func(), err error) {
	l.mu.Lock()
	if !l.fl.Locked() {
		l.mu.Unlock()
		return nil, fmt.Errorf("%w: %s is not held by this lane", ErrLockHeld, l.path)
	}
	return l.mu.Unlock, nil
}

// Holder describes who holds the lock according to its content: "pid N on
// HOST", or "unknown holder".
func (l *RunnerLock) Holder() string {
	pid, host := ReadRunnerLock(l.path)
	if pid == 0 {
		return "unknown holder"
	}
	return fmt.Sprintf("pid %d on %s", pid, host)
}

// ReadRunnerLock returns the pid and host written in a lock file; it never
// takes the lock.
func ReadRunnerLock(path string) (pid int, host string) {
	b, _, err := fsx.ReadOwn(path, 4096)
	if err != nil {
		return 0, ""
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, ""
	}
	pid, _ = strconv.Atoi(f[0])
	if len(f) > 1 {
		host = f[1]
	}
	return pid, host
}

// Unlock releases the OS lock; safe to call when not held. The file stays,
// so its inode (and so the lock) is the same for every process.
func (l *RunnerLock) Unlock() error {
	if !l.fl.Locked() {
		return nil
	}
	heldHere.CompareAndDelete(filepath.Clean(l.path), l)
	l.writeContent("")
	return l.fl.Unlock()
}

func (l *RunnerLock) writeContent(s string) {
	f, err := fsx.OpenWrite(l.path)
	if err != nil {
		return
	}
	_ = f.Truncate(0)
	_, _ = f.WriteString(s)
	_ = f.Sync()
	_ = f.Close()
}

// ErrSessionBusy is returned by Borrow while a task runs on the session.
var ErrSessionBusy = errors.New("a task is running on the account")

// borrowers holds who borrowed each session (Borrow), by lock file;
// heldHere, which RunnerLock of this process holds each OS lock.
var borrowers, heldHere sync.Map // path -> string, path -> *RunnerLock

// Borrow takes the session for someone other than the web lane (the
// console's live sign-in view), without waiting: the session's
// process-wide mutex, so no runner of this process enters it (a runner
// that claimed a task in the same instant waits for the release), and
// the OS lock, so no other process drives the profile. When this process
// already holds the OS lock (its web lane) the mutex is enough; the lane claims nothing for a borrowed
// session (Borrowed). It fails with ErrSessionBusy while a task runs on
// the session and with ErrLockHeld while another process holds its lock.
func (l *RunnerLock) Borrow(host, who string) (release func(), err error) {
	if !l.mu.TryLock() {
		return nil, fmt.Errorf("%w (%s)", ErrSessionBusy, l.path)
	}
	own := false
	if err := l.TryLock(host); err == nil {
		own = true
	} else if _, here := heldHere.Load(filepath.Clean(l.path)); !errors.Is(err, ErrLockHeld) || !here {
		l.mu.Unlock()
		return nil, err
	}
	key := filepath.Clean(l.path)
	borrowers.Store(key, who)
	var once sync.Once
	return func() {
		once.Do(func() {
			borrowers.Delete(key)
			if own {
				_ = l.Unlock()
			}
			l.mu.Unlock()
		})
	}, nil
}

// Borrowed is who borrowed the session (Borrow), "" when nobody has.
func (l *RunnerLock) Borrowed() string {
	v, _ := borrowers.Load(filepath.Clean(l.path))
	s, _ := v.(string)
	return s
}
