// Package logonce keeps a repeating failure from flooding the log: an
// operation that fails the same way at every rescan is logged once, then
// summarised with a count every Every (a few minutes), and its recovery is
// logged once too. "The same way" is the same key with the same error text;
// a different error under one key is news and is logged at once.
package logonce

import (
	"log/slog"
	"slices"
	"sync"
	"time"
)

// DefaultEvery is how often a repeating failure is summarised.
const DefaultEvery = 5 * time.Minute

// maxKeys bounds the memory a spool full of distinct failures can take:
// past it the oldest-summarised half is forgotten (a forgotten failure that
// repeats is logged once more, as new).
const maxKeys = 10000

// Limiter logs each (key, error text) once, then counts. Safe for
// concurrent use. The zero value is not usable: use New.
type Limiter struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu sync.Mutex
	m  map[string]*entry
}

type entry struct {
	text     string    // the error text last logged
	count    int       // failures since the last line logged for this key
	total    int       // failures since the first
	first    time.Time // first failure of this text
	lastLine time.Time // when a line was last written for this key
}

// New returns a Limiter writing to log (nil: discard), summarising every
// every (<= 0: DefaultEvery).
func New(log *slog.Logger, every time.Duration) *Limiter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if every <= 0 {
		every = DefaultEvery
	}
	return &Limiter{log: log, every: every, now: time.Now, m: map[string]*entry{}}
}

// Fail records that the operation named key failed with err. The first
// failure (or one whose error text differs from the last logged) is logged
// at Warn as msg with "key", "err" and attrs; later identical ones are
// counted, and at most once per Every a summary line is logged: msg with
// "key", "err", "repeats" (failures since the last line), "total" and
// "since" (the first failure's time). It reports whether it logged.
func (l *Limiter) Fail(key, msg string, err error, attrs ...any) bool {
	text := "<nil>"
	if err != nil {
		text = err.Error()
	}
	now := l.now()
	l.mu.Lock()
	e := l.m[key]
	switch {
	case e == nil || e.text != text:
		if e == nil && len(l.m) >= maxKeys {
			l.prune()
		}
		e = &entry{text: text, total: 1, first: now, lastLine: now}
		l.m[key] = e
		l.mu.Unlock()
		l.log.Warn(msg, append([]any{"key", key, "err", text}, attrs...)...)
		return true
	case now.Sub(e.lastLine) >= l.every:
		e.count++
		e.total++
		repeats, total, since := e.count, e.total, e.first
		e.count, e.lastLine = 0, now
		l.mu.Unlock()
		l.log.Warn(msg, append([]any{"key", key, "err", text, "repeats", repeats, "total", total,
			"since", since.UTC().Format(time.RFC3339)}, attrs...)...)
		return true
	default:
		e.count++
		e.total++
		l.mu.Unlock()
		return false
	}
}

// OK records that the operation named key succeeded: a failure it had
// logged is forgotten, with one Info line ("recovered", "key", "failures")
// so the log says the problem is over. A key that never failed costs a map
// lookup.
func (l *Limiter) OK(key string) {
	l.mu.Lock()
	e := l.m[key]
	if e == nil {
		l.mu.Unlock()
		return
	}
	delete(l.m, key)
	l.mu.Unlock()
	l.log.Info("recovered", "key", key, "failures", e.total, "err", e.text)
}

// Forget drops key without a line: the thing it named is gone (a drop that
// vanished, a task that finished), so its failures are no news either way.
func (l *Limiter) Forget(key string) {
	l.mu.Lock()
	delete(l.m, key)
	l.mu.Unlock()
}

// Failing reports how many keys are failing now.
func (l *Limiter) Failing() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}

// prune forgets the half of the keys least recently logged. Called with mu.
func (l *Limiter) prune() {
	times := make([]time.Time, 0, len(l.m))
	for _, e := range l.m {
		times = append(times, e.lastLine)
	}
	slices.SortFunc(times, time.Time.Compare)
	cut := times[len(times)/2]
	for k, e := range l.m {
		if !e.lastLine.After(cut) {
			delete(l.m, k)
		}
	}
}
