package spool

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/gofrs/flock"
)

// Borrow (the console's live view) takes a session as the web lane's
// runners and other processes would see it: the mutex always, the OS lock
// unless this process's lane holds it; never while a task runs, never
// from another process's holder.
func TestRunnerLock_Borrow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profiles", "web-runner-x.lock")

	// Nobody holds it: Borrow takes both halves.
	release, err := OpenRunnerLock(path).Borrow("here", "live view of wang")
	if err != nil {
		t.Fatal(err)
	}
	other := OpenRunnerLock(path)
	if err := other.TryLock("there"); !errors.Is(err, ErrLockHeld) {
		t.Errorf("OS lock while borrowed: %v, want held", err)
	}
	if b := other.Borrowed(); b != "live view of wang" {
		t.Errorf("Borrowed %q", b)
	}
	if _, err := OpenRunnerLock(path).Borrow("here", "li"); !errors.Is(err, ErrSessionBusy) {
		t.Errorf("second borrow: %v, want busy", err)
	}
	release()
	release() // safe twice
	if b := other.Borrowed(); b != "" {
		t.Errorf("Borrowed after release %q", b)
	}

	// This process's lane holds the OS lock: Borrow takes the mutex only,
	// and the lane's runner cannot enter until the release.
	lane := OpenRunnerLock(path)
	if err := lane.TryLock("here"); err != nil {
		t.Fatal(err)
	}
	defer lane.Unlock()
	release, err = OpenRunnerLock(path).Borrow("here", "live view of wang")
	if err != nil {
		t.Fatalf("borrow beside this process's lane: %v", err)
	}
	if lane.mu.TryLock() {
		t.Error("a runner could enter a borrowed session")
		lane.mu.Unlock()
	}
	release()
	if !lane.Held() {
		t.Error("the release let the lane's OS lock go")
	}
	enter, err := lane.Run()
	if err != nil {
		t.Fatal(err)
	}
	// A task runs: Borrow refuses, without waiting.
	if _, err := OpenRunnerLock(path).Borrow("here", "wang"); !errors.Is(err, ErrSessionBusy) {
		t.Errorf("borrow while a task runs: %v, want busy", err)
	}
	enter()

	// Another process holds the lock (a handle no RunnerLock of this
	// process has).
	if err := lane.Unlock(); err != nil {
		t.Fatal(err)
	}
	foreign := flock.New(path)
	if ok, err := foreign.TryLock(); !ok || err != nil {
		t.Fatalf("foreign lock: %v %v", ok, err)
	}
	defer foreign.Unlock()
	if _, err := OpenRunnerLock(path).Borrow("here", "wang"); !errors.Is(err, ErrLockHeld) {
		t.Errorf("borrow from another process's holder: %v, want held", err)
	}
	if lane.mu.TryLock() {
		lane.mu.Unlock() // a refused borrow keeps nothing
		if b := lane.Borrowed(); b != "" {
			t.Errorf("a refused borrow is recorded: %q", b)
		}
	} else {
		t.Error("a refused borrow kept the mutex")
	}
}
