package rig

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/spoolgate/spoolgate/doors/cli"
)

// Main is the TestMain of every end-to-end package and of cmd/spoolgate's
// scripts: it lets the test binary act as `spoolgate` (testscript copies it
// onto PATH under that name and runs cli.Main when it is invoked so), with
// the fakes of fake.go when SPOOLGATE_FAKE is set.
func Main(m *testing.M) {
	// A race-built process sleeps a second before it exits (the race
	// runtime's atexit_sleep_ms, 1000 by default, lets other threads
	// report a race at exit). The suites start hundreds of spoolgate
	// processes, the test binary itself (every CLI call, every daemon's
	// stop, 53 submits in one script): each would wait that second.
	// They inherit 0 unless GORACE says otherwise; a race is still
	// reported as it happens, and a leaked goroutine fails goleak.
	if os.Getenv("GORACE") == "" {
		_ = os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	testscript.Main(m, map[string]func(){
		"spoolgate": func() {
			useFakes()
			os.Exit(cli.Main())
		},
	})
}
