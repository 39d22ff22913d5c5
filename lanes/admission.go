package lanes

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
	"golang.org/x/time/rate"
)

// Admission decides which pending tasks a lane may start now, beyond its
// own free slots. The lane takes the first task of its queue that Admit
// accepts: a task refused stays where it is, and never blocks the tasks
// behind it. This is the general shape of "the first task this worker may
// run": the API lane's per-model quotas (ModelGate) are one; a web lane
// with several sessions gives each session its own predicate.
type Admission interface {
	// Admit reports whether e may start now. It must not change anything:
	// the lane asks it of many entries and starts at most one of them.
	Admit(e Entry, now time.Time) bool
	// Acquire takes what e's start uses (a slot of its model, a request of
	// its rate) and returns the call that gives it back when the attempt
	// ends, with the executor's error (nil on success). ok is false if e
	// may not start after all.
	Acquire(e Entry, now time.Time) (release func(err error), ok bool)
	// Ready blocks until an admitted attempt of model may send its
	// request, or ctx ends (then it returns ctx's cause).
	Ready(ctx context.Context, model string) error
	// Wake is the earliest moment after now at which an entry refused now
	// may be admitted without any attempt ending (a pause or a rate window
	// ends); zero if none.
	Wake(now time.Time) time.Time
}

// ModelGate is the API lane's Admission: per model, at most
// models[].concurrency attempts at once and models[].rpm starts a minute
// (spread evenly: claims take the tokens of a golang.org/x/time/rate
// bucket with burst 1, and the sends themselves keep 60/rpm seconds apart,
// so no minute ever sees more), and a model whose server answered 429 with
// Retry-After starts nothing until then, while other models go on. Limits
// count this daemon's attempts, like api.concurrency. Safe for concurrent
// use.
type ModelGate struct {
	mu     sync.Mutex
	models map[string]*modelQuota
}

type modelQuota struct {
	limit    int           // 0: none of its own
	rate     *rate.Limiter // nil: none; claims take its tokens
	interval time.Duration // 60s/rpm: the least time between two sends
	send     sync.Mutex    // one send of the model waits for its turn at a time
	lastSend time.Time     // when the latest send went (under send)
	running  int
	paused   time.Time // no start before this (a 429's Retry-After)
}

// NewModelGate returns the gate of cfg's api models (a model without
// quotas is still paused by a 429), or nil if cfg has no api model.
func NewModelGate(cfg *config.Config) *ModelGate {
	g := &ModelGate{models: map[string]*modelQuota{}}
	for _, m := range cfg.Models {
		if m.Kind != taskfile.KindAPI {
			continue
		}
		q := &modelQuota{limit: m.Concurrency}
		if m.RPM > 0 {
			q.rate = rate.NewLimiter(rate.Limit(m.RPM/60), 1)
			q.interval = time.Duration(float64(time.Minute) / m.RPM)
		}
		g.models[m.Name] = q
	}
	if len(g.models) == 0 {
		return nil
	}
	return g
}

// Admit implements Admission.
func (g *ModelGate) Admit(e Entry, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.models[e.Model]
	return q == nil || q.admits(now)
}

func (q *modelQuota) admits(now time.Time) bool {
	switch {
	case now.Before(q.paused):
		return false
	case q.limit > 0 && q.running >= q.limit:
		return false
	case q.rate != nil && q.rate.TokensAt(now) < 1:
		return false
	}
	return true
}

// Acquire implements Admission.
func (g *ModelGate) Acquire(e Entry, now time.Time) (func(error), bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.models[e.Model]
	if q == nil {
		return func(error) {}, true
	}
	if !q.admits(now) || q.rate != nil && !q.rate.AllowN(now, 1) {
		return nil, false
	}
	q.running++
	var once sync.Once
	return func(err error) {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			q.running--
			var te *attempt.TaskError
			if errors.As(err, &te) && te.RetryAfter > 0 {
				// The vendor said how long this model must rest: the
				// quota is the model's, not the lane's.
				if until := time.Now().Add(te.RetryAfter); until.After(q.paused) {
					q.paused = until
				}
			}
		})
	}, true
}

// Ready implements Admission: the rate's tokens spread the claims; this
// spreads the sends themselves, which a claim's varying latency (a slow
// disk) would otherwise bunch up: each send of a model waits until
// 60/rpm after the previous one went.
func (g *ModelGate) Ready(ctx context.Context, model string) error {
	g.mu.Lock()
	q := g.models[model]
	g.mu.Unlock()
	if q == nil || q.interval == 0 {
		return nil
	}
	q.send.Lock()
	defer q.send.Unlock()
	if wait := time.Until(q.lastSend.Add(q.interval)); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	q.lastSend = time.Now()
	return nil
}

// Wake implements Admission.
func (g *ModelGate) Wake(now time.Time) time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	var wake time.Time
	soonest := func(t time.Time) {
		if t.After(now) && (wake.IsZero() || t.Before(wake)) {
			wake = t
		}
	}
	for _, q := range g.models {
		soonest(q.paused)
		if q.rate != nil {
			if need := 1 - q.rate.TokensAt(now); need > 0 {
				soonest(now.Add(time.Duration(need / float64(q.rate.Limit()) * float64(time.Second))))
			}
		}
	}
	return wake
}

// Paused is, for each model paused by a 429 at now, when it may start
// again (the lane's live view: its tasks' wait on the status pages).
func (g *ModelGate) Paused(now time.Time) map[string]time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out map[string]time.Time
	for name, q := range g.models {
		if now.Before(q.paused) {
			if out == nil {
				out = map[string]time.Time{}
			}
			out[name] = q.paused
		}
	}
	return out
}

// PausedUntil is when model may start again after a 429 (zero: not
// paused), for the status of the daemon and for tests.
func (g *ModelGate) PausedUntil(model string, now time.Time) time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	if q := g.models[model]; q != nil && now.Before(q.paused) {
		return q.paused
	}
	return time.Time{}
}
