package testkit

import "os"

// Reliability reports whether the long soaks run at full size (10,000
// drops, the 500-task crash matrix, 50 slow writers...): `make
// reliability` sets SPOOLGATE_RELIABILITY=1. `make test`, what CI runs,
// runs a smaller version of each, so every guarantee is still checked on
// each change and the full sizes measure it.
func Reliability() bool { return os.Getenv("SPOOLGATE_RELIABILITY") != "" }
