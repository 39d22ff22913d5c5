package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Pool is the baseline the field report started from: one queue and one
// pool of workers for both kinds of model, optionally with a semaphore in
// front of each kind's calls. A worker waiting on a semaphore keeps its
// pool slot, as a worker blocked in a thread pool does.
type Pool struct {
	// Workers is the pool's size.
	Workers int
	// WebSlots and APISlots, when above 0, put a semaphore of that many
	// before web and API calls.
	WebSlots, APISlots int
	// MaxRetries and Backoff are the retry policy of failed attempts (the
	// same as spoolgate's: the first retry after Backoff, doubling); a
	// retry goes back to the queue.
	MaxRetries int
	Backoff    time.Duration
	// Scale is the stand-ins' time scale. A 429's Retry-After is waited
	// for, scaled, inside the attempt without spending it (as an API
	// client library retries a 429 itself).
	Scale float64
	// Exec and Models are the executor and model of each kind.
	Exec   map[taskfile.Kind]attempt.Executor
	Models map[taskfile.Kind]*config.ModelConfig
	// Quota is the API vendor's quota, for the lower bound.
	Quota int
}

// Name is the strategy's name in the table.
func (p *Pool) Name() string {
	switch {
	case p.WebSlots > 0 && p.APISlots > 0:
		return fmt.Sprintf("pool %d + two semaphores (web %d, API %d)", p.Workers, p.WebSlots, p.APISlots)
	case p.WebSlots > 0:
		return fmt.Sprintf("pool %d + web semaphore %d", p.Workers, p.WebSlots)
	case p.APISlots > 0:
		return fmt.Sprintf("pool %d + API semaphore %d", p.Workers, p.APISlots)
	}
	return fmt.Sprintf("pool %d, no gate", p.Workers)
}

// Limits are the pool's: one web session, API calls capped by the pool,
// its API semaphore and the vendor's quota, all tasks by the pool.
func (p *Pool) Limits() Limits {
	api := p.Workers
	if p.APISlots > 0 {
		api = min(api, p.APISlots)
	}
	if p.Quota > 0 {
		api = min(api, p.Quota)
	}
	return Limits{Sessions: 1, API: api, Workers: p.Workers}
}

type item struct {
	task      Task
	attempt   int
	notBefore time.Time
}

// queue is a FIFO of items, each due at its notBefore.
type queue struct {
	mu       sync.Mutex
	items    []*item
	inflight int
	changed  chan struct{} // closed and replaced at every change
}

func (q *queue) signal() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// take returns the first due item, waiting for one; ok is false when the
// queue is empty and nothing is in flight (the run is over) or ctx ended.
func (q *queue) take(ctx context.Context) (*item, bool) {
	for {
		q.mu.Lock()
		now := time.Now()
		var next time.Time
		for i, it := range q.items {
			if !it.notBefore.After(now) {
				q.items = append(q.items[:i], q.items[i+1:]...)
				q.inflight++
				q.mu.Unlock()
				return it, true
			}
			if next.IsZero() || it.notBefore.Before(next) {
				next = it.notBefore
			}
		}
		if len(q.items) == 0 && q.inflight == 0 {
			q.mu.Unlock()
			return nil, false
		}
		ch := q.changed
		q.mu.Unlock()
		var timer *time.Timer
		var due <-chan time.Time
		if !next.IsZero() {
			timer = time.NewTimer(time.Until(next))
			due = timer.C
		}
		select {
		case <-ctx.Done():
		case <-ch:
		case <-due:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return nil, false
		}
	}
}

// done ends an item's attempt; a retry is put back first.
func (q *queue) done(retry *item) {
	q.mu.Lock()
	if retry != nil {
		q.items = append(q.items, retry)
	}
	q.inflight--
	q.signal()
	q.mu.Unlock()
}

// Run runs tasks, all submitted at once, and returns the figures.
func (p *Pool) Run(ctx context.Context, tasks []Task) Result {
	tl := newTally(tasks)
	q := &queue{changed: make(chan struct{})}
	t0 := time.Now()
	for _, t := range tasks {
		q.items = append(q.items, &item{task: t, attempt: 1})
		tl.submit(t.ID, t0)
	}
	sems := map[taskfile.Kind]chan struct{}{}
	if p.WebSlots > 0 {
		sems[taskfile.KindWeb] = make(chan struct{}, p.WebSlots)
	}
	if p.APISlots > 0 {
		sems[taskfile.KindAPI] = make(chan struct{}, p.APISlots)
	}
	var wg sync.WaitGroup
	for range p.Workers {
		wg.Go(func() {
			for {
				it, ok := q.take(ctx)
				if !ok {
					return
				}
				q.done(p.attempt(ctx, tl, sems[it.task.Kind], it))
			}
		})
	}
	wg.Wait()
	note := "one queue, one pool for both kinds"
	if len(sems) > 0 {
		note = "one queue, one pool; a worker waiting for a semaphore holds its slot"
	}
	return tl.result(p.Name(), note, tasks, t0, p.Scale, p.Limits())
}

// attempt runs one attempt of it, first taking sem (the semaphore of its
// kind, if any); it returns the retry to queue, or nil.
func (p *Pool) attempt(ctx context.Context, tl *tally, sem chan struct{}, it *item) *item {
	k := it.task.Kind
	if sem != nil {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		defer func() { <-sem }()
	}
	task := &taskfile.Task{TaskID: it.task.ID, ModelKind: k, Model: p.Models[k].Name, Content: it.task.Content(), Attempt: it.attempt}
	tl.attempt(it.task.ID, time.Now())
	var err error
	for {
		_, err = p.Exec[k].Execute(ctx, attempt.NewJob(task, p.Models[k], nil))
		var te *attempt.TaskError
		if errors.As(err, &te) && te.RetryAfter > 0 && ctx.Err() == nil {
			tl.throttle()
			t := time.NewTimer(time.Duration(float64(te.RetryAfter) * p.Scale))
			select {
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
			continue
		}
		break
	}
	tl.outcome(it.task.ID, err)
	now := time.Now()
	switch {
	case err == nil:
		tl.final(it.task.ID, taskfile.StateSuccess, now)
	case attempt.Classify(err) == taskfile.ClassTransient && it.attempt <= p.MaxRetries && ctx.Err() == nil:
		d := p.Backoff
		for i := 1; i < it.attempt; i++ {
			d *= 2
		}
		return &item{task: it.task, attempt: it.attempt + 1, notBefore: now.Add(d)}
	default:
		tl.final(it.task.ID, taskfile.StateFailed, now)
	}
	return nil
}
