package lanes

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofrs/flock"
)

// WebConcurrency is the web lane's concurrency. It is 1, always, and not a
// setting: one logged-in chat session admits one generation at a time, and
// every attempt to run two at once (the field report tried pools of 8 and
// 16) made the page error and the sessions overwrite each other.
const WebConcurrency = 1

// ErrLockHeld is returned by TryLock when another process holds the lock.
var ErrLockHeld = errors.New("web runner lock is held by another process")

// WebLock is the on-disk half of the web lane's exclusivity (the other half
// is an in-process mutex): an OS file lock at
// <profiles>/web-runner-<h>.lock, h = first 12 hex digits of SHA-256 of the
// OS user name, so two spoolgate instances of one user never drive one
// browser session at once. The file holds "pid host" of the holder.
type WebLock struct {
	path string
	fl   *flock.Flock
}

// WebLockPath returns the lock file's path for the current user.
func WebLockPath(profiles string) string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	} else if v := os.Getenv("USER"); v != "" {
		name = v
	}
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(profiles, "web-runner-"+hex.EncodeToString(sum[:])[:12]+".lock")
}

// NewWebLock returns the web lock for the profiles folder; it takes nothing.
func NewWebLock(profiles string) *WebLock {
	p := WebLockPath(profiles)
	return &WebLock{path: p, fl: flock.New(p)}
}

// Path is the lock file.
func (l *WebLock) Path() string { return l.path }

// TryLock takes the lock without waiting and writes our pid and host into
// it. It returns ErrLockHeld (wrapped, naming the holder) if it is taken.
func (l *WebLock) TryLock(host string) error {
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
	// Rewrite the content in place through a second handle, not by rename,
	// which would swap the locked inode for an unlocked one. (On Windows the
	// locked range refuses the second handle; the holder is then unknown.)
	l.writeContent(fmt.Sprintf("%d %s\n", os.Getpid(), host))
	return nil
}

// Holder describes who holds the lock according to its content: "pid N on
// HOST", or "unknown holder".
func (l *WebLock) Holder() string {
	pid, host := ReadWebLock(l.path)
	if pid == 0 {
		return "unknown holder"
	}
	return fmt.Sprintf("pid %d on %s", pid, host)
}

// ReadWebLock returns the pid and host written in a lock file.
func ReadWebLock(path string) (pid int, host string) {
	b, err := os.ReadFile(path)
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

// Unlock releases the lock; safe to call when not held. The file stays, so
// its inode (and so the lock) is the same for every process.
func (l *WebLock) Unlock() error {
	if !l.fl.Locked() {
		return nil
	}
	l.writeContent("")
	return l.fl.Unlock()
}

func (l *WebLock) writeContent(s string) {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(s)
	_ = f.Sync()
	_ = f.Close()
}
