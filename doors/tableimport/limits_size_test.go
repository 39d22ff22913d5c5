package tableimport_test

import (
	"testing"

	"github.com/spoolgate/spoolgate/doors/tableimport"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestLimits_matchTaskSize: a row may fill to exactly what a task file
// may hold; the constant is written out in tableimport (it imports no
// package of this module), so this keeps it from drifting.
func TestLimits_matchTaskSize(t *testing.T) {
	if tableimport.MaxRow != taskfile.MaxTaskSize || tableimport.MaxLine != taskfile.MaxTaskSize {
		t.Errorf("MaxRow %d, MaxLine %d; a task may hold %d", tableimport.MaxRow, tableimport.MaxLine, taskfile.MaxTaskSize)
	}
}
