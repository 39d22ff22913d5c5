package chains

import (
	"testing"

	"github.com/spoolgate/spoolgate/e2e/rig"
)

// TestMain lets the test binary act as `spoolgate` for the daemons and
// commands its tests start (rig.Main).
func TestMain(m *testing.M) { rig.Main(m) }
