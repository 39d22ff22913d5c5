package notify

import (
	"context"
	"time"
)

// poll is the watches' one loop: look, then wait for the period, or for a
// kick and then settle (so what the kick announced can finish landing),
// and look again, until ctx ends. A nil kick never fires.
func poll(ctx context.Context, every time.Duration, kick <-chan struct{}, settle time.Duration, look func()) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		look()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-kick:
			t := time.NewTimer(settle)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}
