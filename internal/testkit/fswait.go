package testkit

import (
	"os"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WaitFS waits until cond holds, checking it once at first and then at
// each file system event in dirs (fsnotify: a file created, renamed into
// place, written or removed), never in a sleep loop. It is for tests of a
// daemon that runs as another process, whose only events are its files;
// dirs are created if missing. It fails the test after d.
func WaitFS(t testing.TB, what string, d time.Duration, dirs []string, cond func() bool) {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatalf("fsnotify: %v", err)
	}
	defer w.Close()
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := w.Add(dir); err != nil {
			t.Fatalf("watch %s: %v", dir, err)
		}
	}
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	// Watching began before this first look: nothing can slip between.
	for !cond() {
		select {
		case <-w.Events:
		case err := <-w.Errors:
			// An overflow loses events, not the state: look again.
			t.Logf("fsnotify: %v (looking again)", err)
		case <-timeout.C:
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
	}
}

// Wait waits until cond holds, looking every 10 ms, and fails the test
// after d naming what it waited for. It is the one polling wait of the
// tests, for conditions no event announces (another process's state, a
// server's counters); where a file system event or a readiness message
// says it, WaitFS or Ready waits for that instead.
func Wait(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	if !Until(d, cond) {
		t.Fatalf("timed out after %s waiting for %s", d, what)
	}
}

// Until is Wait for a caller that reports the failure itself (with what
// it saw): it looks every 10 ms and says whether cond held within d.
func Until(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond) // the poll's pace, not a synchronization
	}
	return true
}
