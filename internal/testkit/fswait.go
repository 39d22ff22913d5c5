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
