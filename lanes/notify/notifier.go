package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spoolgate/spoolgate/internal/startstop"
	"github.com/spoolgate/spoolgate/spool/config"
)

// QueueSize is how many events wait per receiver before new ones are
// dropped (and logged): a receiver that is down for long must not grow
// the daemon's memory without bound.
const QueueSize = 256

// maxBackoff caps the wait between two tries of one delivery.
const maxBackoff = 5 * time.Minute

// Notifier sends events to the receivers of `notify:`. Notify never
// blocks: each receiver has its own bounded queue and worker, so a hanging
// command does not delay the webhook and neither delays a lane. A nil
// *Notifier (nothing configured) accepts every call and sends nothing.
type Notifier struct {
	cfg   *config.Config
	ncfg  config.NotifyConfig
	log   *slog.Logger
	sinks []*sink
	tr    *http.Transport // the webhook's; its idle connections close at Stop

	life     startstop.Base
	ctx      context.Context // of deliveries: ends when Stop's grace does
	cancel   context.CancelFunc
	stopping chan struct{} // closed by Stop: workers drain their queues and end
	stopOnce sync.Once
	wg       sync.WaitGroup

	delivered, failed, dropped atomic.Int64
}

// sink is one receiver: the command or the webhook.
type sink struct {
	name string
	send func(ctx context.Context, e *Event, data []byte) error
	q    chan item
}

type item struct {
	e    Event
	data []byte
	done *tracker
}

// tracker calls fn once every receiver has finished with one event: nil
// if all delivered it, else the last error.
type tracker struct {
	left atomic.Int32
	mu   sync.Mutex
	err  error
	fn   func(error)
}

func (t *tracker) finish(err error) {
	if t == nil {
		return
	}
	if err != nil {
		t.mu.Lock()
		t.err = err
		t.mu.Unlock()
	}
	if t.left.Add(-1) == 0 && t.fn != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.fn(t.err)
	}
}

// New returns the Notifier of cfg's `notify:`, or nil if it names no
// receiver.
func New(cfg *config.Config, log *slog.Logger) *Notifier {
	if !cfg.Notify.Enabled() {
		return nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &Notifier{cfg: cfg, ncfg: cfg.Notify, log: log.With("component", "notify"), stopping: make(chan struct{})}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	if len(n.ncfg.Command) > 0 {
		argv, timeout := n.ncfg.Command, n.ncfg.Timeout.D()
		n.sinks = append(n.sinks, &sink{name: "command", q: make(chan item, QueueSize),
			send: func(ctx context.Context, e *Event, data []byte) error { return runCommand(ctx, argv, timeout, e, data) }})
	}
	if n.ncfg.Webhook != "" {
		n.tr = http.DefaultTransport.(*http.Transport).Clone()
		client := &http.Client{Timeout: n.ncfg.Timeout.D(), Transport: n.tr}
		url, headers := n.ncfg.Webhook, n.ncfg.Headers
		n.sinks = append(n.sinks, &sink{name: "webhook", q: make(chan item, QueueSize),
			send: func(ctx context.Context, e *Event, data []byte) error {
				return postWebhook(ctx, client, url, headers, data)
			}})
	}
	return n
}

// Wants reports whether event would be sent.
func (n *Notifier) Wants(event string) bool { return n != nil && n.ncfg.Wants(event) }

// Start runs the receivers' workers until Stop. Safe to call twice; a
// Notifier does not start again after Stop.
func (n *Notifier) Start(ctx context.Context) error {
	if n == nil {
		return nil
	}
	ctx, ok, started, stopped := n.life.StartInit(ctx)
	if !ok {
		return nil
	}
	for _, s := range n.sinks {
		n.wg.Add(1)
		go n.work(s)
	}
	go func() {
		defer stopped()
		started()
		<-ctx.Done()
		n.stopOnce.Do(func() { close(n.stopping) })
		// The queued events get a short while to go out.
		grace := time.AfterFunc(min(n.ncfg.Timeout.D(), 5*time.Second), n.cancel)
		n.wg.Wait()
		grace.Stop()
		n.cancel()
		n.closeIdle()
	}()
	return nil
}

// Started is closed once the workers run.
func (n *Notifier) Started() <-chan struct{} {
	if n == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return n.life.Started()
}

// Stop lets the queued events go out for a short while (the receivers'
// timeout, at most 5 s), then cancels what is still being delivered and
// waits for the workers. Events still queued then are logged as not
// delivered; later ones are refused. Safe to call twice, and without Start.
func (n *Notifier) Stop() {
	if n == nil {
		return
	}
	n.life.Stop()
	n.stopOnce.Do(func() { close(n.stopping) })
}

// Notify queues e for every receiver, if e's event is wanted. It never
// blocks: a full queue drops the event and logs it.
func (n *Notifier) Notify(e Event) { n.notify(e, nil) }

// NotifyThen is Notify that calls done once every receiver has finished
// with e (delivered, or given up: then done gets the last error). done is
// not called for an event that Stop leaves undelivered.
func (n *Notifier) NotifyThen(e Event, done func(error)) { n.notify(e, done) }

func (n *Notifier) notify(e Event, done func(error)) {
	if n == nil || !n.ncfg.Wants(e.Event) {
		return
	}
	select {
	case <-n.stopping:
		n.dropped.Add(1)
		n.log.Warn("event after shutdown: not sent", "event", e.Event, "id", e.ID)
		return
	default:
	}
	data, err := json.Marshal(e)
	if err != nil {
		n.log.Error("encode event", "event", e.Event, "err", err)
		return
	}
	var t *tracker
	if done != nil {
		t = &tracker{fn: done}
		t.left.Store(int32(len(n.sinks)))
	}
	for _, s := range n.sinks {
		select {
		case s.q <- item{e: e, data: data, done: t}:
		default:
			n.dropped.Add(1)
			n.log.Error("queue full: event dropped", "receiver", s.name, "event", e.Event, "id", e.ID, "queue", QueueSize)
			t.finish(fmt.Errorf("%s: queue full", s.name))
		}
	}
}

func (n *Notifier) work(s *sink) {
	defer n.wg.Done()
	for {
		select {
		case it := <-s.q:
			n.deliver(s, it)
		case <-n.stopping:
			for {
				select {
				case it := <-s.q:
					n.deliver(s, it)
				default:
					return
				}
			}
		}
	}
}

// deliver tries one event on one receiver, retrying with doubling backoff.
func (n *Notifier) deliver(s *sink, it item) {
	log := n.log.With("receiver", s.name, "event", it.e.Event, "id", it.e.ID)
	if n.ctx.Err() != nil {
		n.dropped.Add(1)
		log.Warn("shutdown: event not delivered")
		return
	}
	wait := n.ncfg.RetryBackoff.D()
	tries := 1 + *n.ncfg.Retries
	var err error
	for try := 1; try <= tries; try++ {
		start := time.Now()
		if err = s.send(n.ctx, &it.e, it.data); err == nil {
			n.delivered.Add(1)
			log.Info("event delivered", "try", try, "took", time.Since(start).Round(time.Millisecond))
			it.done.finish(nil)
			return
		}
		if n.ctx.Err() != nil {
			// Stop cut it short: not a failure of the receiver, and
			// done is not told (a batch marker stays unsent).
			n.dropped.Add(1)
			log.Warn("shutdown: delivery cut short", "try", try, "err", err)
			return
		}
		if try == tries {
			break
		}
		log.Warn("event delivery failed: retrying", "try", try, "err", err, "in", wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-n.ctx.Done():
			t.Stop()
		}
		wait = min(wait*2, maxBackoff)
	}
	n.failed.Add(1)
	log.Error("event not delivered: giving up", "tries", tries, "err", err)
	it.done.finish(err)
}

// Send delivers e to every receiver at once, one try each, and returns the
// first failure: for `spoolgate notify test`, whose user wants to see the
// outcome, not a queue. report is told each receiver's outcome.
func (n *Notifier) Send(ctx context.Context, e Event, report func(receiver string, err error)) error {
	if n == nil {
		return fmt.Errorf("notify: no command or webhook configured")
	}
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	defer n.closeIdle()
	var first error
	for _, s := range n.sinks {
		err := s.send(ctx, &e, data)
		if report != nil {
			report(s.name, err)
		}
		if err != nil && first == nil {
			first = fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return first
}

func (n *Notifier) closeIdle() {
	if n.tr != nil {
		n.tr.CloseIdleConnections()
	}
}

// Stats are the notifier's counts since start, one per event and
// receiver: delivered, given up after every retry, and dropped (a full
// queue, or not delivered when Stop ended the worker).
type Stats struct{ Delivered, Failed, Dropped int64 }

// Stats returns the counts so far.
func (n *Notifier) Stats() Stats {
	if n == nil {
		return Stats{}
	}
	return Stats{Delivered: n.delivered.Load(), Failed: n.failed.Load(), Dropped: n.dropped.Load()}
}
