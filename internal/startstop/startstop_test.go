package startstop

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
)

type svc struct {
	Base
	ran chan struct{}
}

func (s *svc) Start(ctx context.Context) error {
	ctx, ok, started, stopped := s.StartInit(ctx)
	if !ok {
		return nil
	}
	go func() {
		defer stopped()
		started()
		<-ctx.Done()
		if !errors.Is(context.Cause(ctx), ErrStop) && ctx.Err() == nil {
			panic("ended without a cause")
		}
	}()
	return nil
}

func TestBase_Lifecycle(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := &svc{}
	s.Stop() // before Start: a no-op
	started := s.Started()
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil { // twice: a no-op
		t.Fatal(err)
	}
	select {
	case <-started: // the channel taken before Start is the one closed
	case <-time.After(10 * time.Second):
		t.Fatal("Started not closed")
	}
	if !s.Running() {
		t.Fatal("not running after Start")
	}
	s.Stop()
	s.Stop()
	if s.Running() {
		t.Fatal("running after Stop")
	}
	// Started again after a stop.
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-s.Started()
	s.Stop()
}

// A run that fails before it calls started still closes Started.
func TestBase_FailedStartClosesStarted(t *testing.T) {
	var b Base
	_, ok, _, stopped := b.StartInit(context.Background())
	if !ok {
		t.Fatal("not told to start")
	}
	stopped()
	select {
	case <-b.Started():
	default:
		t.Fatal("Started not closed by stopped")
	}
}
