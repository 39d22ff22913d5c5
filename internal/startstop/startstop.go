// Package startstop is the one lifecycle of spoolgate's long-lived
// components (the lanes, the daemon, the intake watcher, the HTTP
// server), after river's startstop: Start(ctx) error returns once the
// component runs in the background; Started() is closed once it has
// started (or failed to); Stop() returns when it has fully stopped, and
// is safe to call twice and before Start.
package startstop

import (
	"context"
	"errors"
	"sync"
)

// ErrStop is the cause of a component's context when Stop ends it.
var ErrStop = errors.New("component stopped")

// Service is a long-lived component.
type Service interface {
	// Start runs the component in the background and returns; an error
	// means it did not start (and Started is closed).
	Start(ctx context.Context) error
	// Started is closed once the component has started, or failed to.
	Started() <-chan struct{}
	// Stop returns once the component has fully stopped. Safe to call
	// twice, and before Start.
	Stop()
}

// Base gives a component the lifecycle's bookkeeping. A component's
// Start calls StartInit first; when told to start, it runs its work in a
// goroutine that calls started() once it is up and defers stopped(). The
// embedded Stop cancels the context StartInit returned and waits for
// stopped(); a component with a staged stop calls StopInit instead.
type Base struct {
	mu      sync.Mutex
	started chan struct{}
	stopped chan struct{}
	cancel  context.CancelCauseFunc
}

// StartInit begins a Start. It returns the component's context (canceled
// by Stop with ErrStop), whether to start (false when already started),
// and the two calls of the run: started (idempotent) and stopped (once,
// at the end; it also closes Started if started was never called).
func (b *Base) StartInit(ctx context.Context) (context.Context, bool, func(), func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped != nil {
		return ctx, false, func() {}, func() {}
	}
	if b.started == nil {
		b.started = make(chan struct{})
	}
	b.stopped = make(chan struct{})
	ctx, b.cancel = context.WithCancelCause(ctx)
	started := sync.OnceFunc(func() { close(b.started) })
	stopped := b.stopped
	return ctx, true, started, func() { started(); close(stopped) }
}

// Started is closed once the component has started, or failed to. It may
// be called before Start.
func (b *Base) Started() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started == nil {
		b.started = make(chan struct{})
	}
	return b.started
}

// Stop cancels the component's context and waits until its run has
// called stopped. Safe to call twice, and before Start.
func (b *Base) Stop() {
	ok, stopped, finalize := b.StopInit()
	if !ok {
		return
	}
	defer finalize()
	<-stopped
}

// StopInit begins a Stop for a component that stops in stages: it
// reports whether there is anything to stop, cancels the context, and
// returns the channel to wait on and the call that ends the Stop (after
// which the component may be started again). Concurrent Stops wait for
// each other.
func (b *Base) StopInit() (bool, <-chan struct{}, func()) {
	b.mu.Lock()
	if b.stopped == nil {
		b.mu.Unlock()
		return false, nil, func() {}
	}
	b.cancel(ErrStop)
	return true, b.stopped, func() {
		b.started, b.stopped = nil, nil
		b.mu.Unlock()
	}
}

// Running reports whether the component has started and not stopped.
func (b *Base) Running() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stopped != nil
}
