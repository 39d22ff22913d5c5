// Package retention runs the daemon's archive passes: finished tasks past
// their retention (config `retention:`) move to their lane's archive/.
package retention

import (
	"context"
	"log/slog"
	"time"

	"github.com/spoolgate/spoolgate/internal/startstop"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
)

// Archiver runs spool.Store.Archive at start and then periodically.
type Archiver struct {
	Store *spool.Store
	Log   *slog.Logger
	// Every is the period between passes; default Period(cfg).
	Every time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// OnPass, if set, is told the result of each pass (tests, metrics).
	OnPass func(spool.ArchiveStats, error)

	startstop.Base
}

// Period is the default time between passes: a 24th of the shortest
// retention, between 1 s and 1 h. Retention is counted in days, so an
// hour late is nothing; a short retention (in tests) is served promptly.
func Period(cfg *config.Config) time.Duration {
	return min(max(cfg.Retention.Shortest()/24, time.Second), time.Hour)
}

// Start runs passes until Stop; with no retention configured it does
// nothing. Safe to call twice. Stop cuts a pass short between two tasks.
func (a *Archiver) Start(ctx context.Context) error {
	if a.Store.Cfg.Retention.Shortest() == 0 {
		if _, ok, _, stopped := a.StartInit(ctx); ok {
			stopped() // nothing to run: started and done at once
		}
		return nil
	}
	if a.Log == nil {
		a.Log = slog.New(slog.DiscardHandler)
	}
	if a.Every <= 0 {
		a.Every = Period(a.Store.Cfg)
	}
	if a.Now == nil {
		a.Now = time.Now
	}
	ctx, ok, started, stopped := a.StartInit(ctx)
	if !ok {
		return nil
	}
	go func() {
		defer stopped()
		started()
		a.loop(ctx)
	}()
	return nil
}

func (a *Archiver) loop(ctx context.Context) {
	t := time.NewTicker(a.Every)
	defer t.Stop()
	for {
		start := time.Now()
		st, err := a.Store.Archive(ctx, a.Now())
		switch {
		case err != nil && ctx.Err() == nil:
			a.Log.Error("archive pass", "err", err)
		case st.Tasks+st.Files+st.Failed > 0:
			a.Log.Info("archived finished tasks past their retention", "tasks", st.Tasks, "files", st.Files,
				"leftForNextPass", st.Failed, "took", time.Since(start).Round(time.Millisecond))
		}
		if a.OnPass != nil {
			a.OnPass(st, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
