package runloop

import (
	"context"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestLoop_RunEnd(t *testing.T) {
	defer goleak.VerifyNone(t)
	var l Loop
	var runs atomic.Int32
	started := make(chan struct{})
	fn := func(ctx context.Context) {
		runs.Add(1)
		close(started)
		<-ctx.Done()
	}
	l.Run(context.Background(), fn)
	l.Run(context.Background(), fn)
	<-started
	if !l.End() {
		t.Error("End after Run: want true")
	}
	if l.End() {
		t.Error("second End: want false")
	}
	if runs.Load() != 1 {
		t.Errorf("ran %d times, want once", runs.Load())
	}
	var never Loop
	if never.End() {
		t.Error("End before Run: want false")
	}
	never.Run(context.Background(), fn) // after End: does not start
	if runs.Load() != 1 {
		t.Error("Run after End started the loop")
	}
}
