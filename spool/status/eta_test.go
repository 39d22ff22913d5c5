package status

import (
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestSimulate_Priority: the ETA plays the queue in the lanes' order, so a
// high task dropped behind normal ones is estimated to finish first, and a
// low task aged to high too.
func TestSimulate_Priority(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	min := time.Minute
	pending := []summary{
		{id: "n1", submittedAt: now.Add(-10 * min)},
		{id: "n2", submittedAt: now.Add(-9 * min)},
		{id: "urgent", priority: taskfile.PriorityHigh, submittedAt: now},
		{id: "low", priority: taskfile.PriorityLow, submittedAt: now.Add(-5 * min)},
		{id: "old-low", priority: taskfile.PriorityLow, submittedAt: now.Add(-3 * time.Hour)},
	}
	finish := simulate(now, 1, min, time.Hour, nil, pending)
	var order []string
	for _, p := range pending {
		order = append(order, p.id)
	}
	want := []string{"old-low", "urgent", "n1", "n2", "low"}
	for i := range want {
		if order[i] != want[i] || finish[i] != time.Duration(i+1)*min {
			t.Fatalf("order %v finishes %v, want %v one minute apart", order, finish, want)
		}
	}
}
