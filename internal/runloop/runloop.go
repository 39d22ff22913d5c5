// Package runloop is the Start/Stop of a component that runs one
// goroutine until it is stopped.
package runloop

import (
	"context"
	"sync"
)

// Loop runs one goroutine: Run starts it once, End cancels it and waits.
// Both are safe to call twice, End also before Run.
type Loop struct {
	cancel context.CancelFunc
	done   chan struct{}
	start  sync.Once
	stop   sync.Once
}

// Run starts fn on its own goroutine, once.
func (g *Loop) Run(ctx context.Context, fn func(context.Context)) {
	g.start.Do(func() {
		g.done = make(chan struct{})
		ctx, g.cancel = context.WithCancel(ctx)
		go func() {
			defer close(g.done)
			fn(ctx)
		}()
	})
}

// End cancels the goroutine and waits for it; it reports whether one ran.
func (g *Loop) End() bool {
	ran := false
	g.stop.Do(func() {
		ran = true
		g.start.Do(func() { ran = false })
		if ran {
			g.cancel()
			<-g.done
		}
	})
	return ran
}
