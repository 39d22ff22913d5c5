// Package testkit holds what spoolgate's tests across packages share: a
// readiness socket for daemons started as processes, a goroutine-safe
// buffer, headless Chromium options, and the stand-ins' site configs.
package testkit

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Ready is a NOTIFY_SOCKET (the sd_notify protocol, which `spoolgate run`
// speaks) for one daemon started as a process: a test waits for its
// READY=1, an event, instead of reading its log or its folders.
type Ready struct {
	path string
	conn *net.UnixConn
	msgs chan string
}

// NewReady listens on a fresh socket; it is closed at the test's cleanup.
func NewReady(t testing.TB) *Ready {
	t.Helper()
	// A short folder: a socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "sg-ready")
	if err != nil {
		t.Fatal(err)
	}
	r := &Ready{path: filepath.Join(dir, "notify"), msgs: make(chan string, 16)}
	r.conn, err = net.ListenUnixgram("unixgram", &net.UnixAddr{Name: r.path, Net: "unixgram"})
	if err != nil {
		t.Fatalf("notify socket: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := r.conn.Read(buf)
			if err != nil {
				return
			}
			for _, line := range strings.Split(string(buf[:n]), "\n") {
				select {
				case r.msgs <- line:
				default: // nobody waits for more than a few
				}
			}
		}
	}()
	t.Cleanup(func() { r.conn.Close(); <-done; os.RemoveAll(dir) })
	return r
}

// Env is the environment entry that points a daemon at this socket.
func (r *Ready) Env() string { return "NOTIFY_SOCKET=" + r.path }

// Path is the socket's path.
func (r *Ready) Path() string { return r.path }

// Wait waits until the daemon says READY=1; it fails the test after d.
func (r *Ready) Wait(t testing.TB, what string, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case m := <-r.msgs:
			if m == "READY=1" {
				return
			}
		case <-timeout:
			t.Fatalf("timed out after %s waiting for %s to say READY=1", d, what)
		}
	}
}
