package lanes

import (
	"runtime/debug"
	"testing"
)

// TestTightGC: daemons starting at once share one lowering of the GC
// target, and whichever ends last restores the target from before, in
// any order; a restore called twice counts once.
func TestTightGC(t *testing.T) {
	before := debug.SetGCPercent(137)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	current := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	a := tightGC()
	if p := current(); p != startupGCPercent {
		t.Fatalf("during a start-up the target is %d, want %d", p, startupGCPercent)
	}
	b := tightGC()
	a()
	a()
	if p := current(); p != startupGCPercent {
		t.Fatalf("one start-up still running: target %d, want %d", p, startupGCPercent)
	}
	b()
	if p := current(); p != 137 {
		t.Fatalf("after both: target %d, want the 137 from before", p)
	}
}
