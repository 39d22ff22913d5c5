package lanes

import (
	"runtime/debug"
	"sync"
)

// tightGC lowers the process's GC target for a start-up and returns the
// call that raises it again. The target is process-wide, so daemons that
// start at once (tests, a bench) share one lowering: the first sets it,
// the last restores what was there before, whatever order they end in.
func tightGC() (restore func()) {
	gcMu.Lock()
	defer gcMu.Unlock()
	if gcUsers == 0 {
		gcBefore = debug.SetGCPercent(startupGCPercent)
	}
	gcUsers++
	var once sync.Once
	return func() {
		once.Do(func() {
			gcMu.Lock()
			defer gcMu.Unlock()
			if gcUsers--; gcUsers == 0 {
				debug.SetGCPercent(gcBefore)
			}
		})
	}
}

// startupGCPercent is the GC target while a daemon starts: the heap may
// grow by a quarter of what is live before a collection, not by all of it.
const startupGCPercent = 25

var (
	gcMu     sync.Mutex
	gcUsers  int
	gcBefore int
)
