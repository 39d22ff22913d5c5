package lanes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func gateConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.ParseConfig([]byte(`
api: {concurrency: 5}
models:
  - {name: a, kind: api, baseURL: "http://127.0.0.1:9/v1", concurrency: 2}
  - {name: b, kind: api, baseURL: "http://127.0.0.1:9/v1", concurrency: 3}
  - {name: r, kind: api, baseURL: "http://127.0.0.1:9/v1", rpm: 30}
  - {name: free, kind: api, baseURL: "http://127.0.0.1:9/v1"}
`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestModelGate_Concurrency(t *testing.T) {
	g := lanes.NewModelGate(gateConfig(t))
	now := time.Now()
	a, b := lanes.Entry{ID: "x", Model: "a"}, lanes.Entry{ID: "y", Model: "b"}
	var rel []func(error)
	for i := range 2 {
		r, ok := g.Acquire(a, now)
		if !ok {
			t.Fatalf("a #%d refused under its concurrency 2", i+1)
		}
		rel = append(rel, r)
	}
	if g.Admit(a, now) {
		t.Error("a admitted a third at once")
	}
	if _, ok := g.Acquire(a, now); ok {
		t.Error("a acquired a third at once")
	}
	for i := range 3 {
		if _, ok := g.Acquire(b, now); !ok {
			t.Fatalf("b #%d refused while a is at its limit", i+1)
		}
	}
	if g.Admit(b, now) || !g.Admit(lanes.Entry{Model: "free"}, now) || !g.Admit(lanes.Entry{Model: "unknown"}, now) {
		t.Error("b over its limit, or a model without quotas, answered wrong")
	}
	rel[0](nil)
	rel[0](nil) // twice: the slot is given back once
	if !g.Admit(a, now) {
		t.Error("a's slot not given back")
	}
	if _, ok := g.Acquire(a, now); !ok {
		t.Error("a refused after a release")
	}
	if g.Admit(a, now) {
		t.Error("a release counted twice")
	}
	if !g.Wake(now).IsZero() {
		t.Error("a concurrency limit wakes the lane: it waits for an attempt to end instead")
	}
}

func TestModelGate_RPM(t *testing.T) {
	g := lanes.NewModelGate(gateConfig(t))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := lanes.Entry{ID: "x", Model: "r"} // rpm 30: one every 2 s
	starts := 0
	var at []time.Duration
	for step := time.Duration(0); step <= time.Minute; step += 100 * time.Millisecond {
		if g.Admit(r, now.Add(step)) {
			if _, ok := g.Acquire(r, now.Add(step)); !ok {
				t.Fatal("admitted but not acquired")
			}
			starts++
			at = append(at, step)
		}
	}
	// Starts at 0, 2 s, ..., 60 s: 31 in the closed minute, 30 in any
	// half-open one.
	if starts != 31 || at[1] != 2*time.Second || at[30] != time.Minute {
		t.Errorf("%d starts in a minute at %v, want every 2 s", starts, at)
	}
	if w := g.Wake(now.Add(time.Minute + 500*time.Millisecond)); !w.Equal(now.Add(62 * time.Second)) {
		t.Errorf("wake %v, want the next token at 62 s", w.Sub(now))
	}
}

func TestModelGate_429PausesOnlyItsModel(t *testing.T) {
	g := lanes.NewModelGate(gateConfig(t))
	now := time.Now()
	a, b := lanes.Entry{ID: "x", Model: "a"}, lanes.Entry{ID: "y", Model: "b"}
	rel, _ := g.Acquire(a, now)
	rel(&attempt.TaskError{Class: taskfile.ClassTransient, Err: errors.New("HTTP 429"), RetryAfter: time.Hour})
	if g.Admit(a, time.Now()) {
		t.Error("a admitted during its Retry-After")
	}
	if !g.Admit(b, time.Now()) {
		t.Error("b paused by a's 429")
	}
	until := g.PausedUntil("a", time.Now())
	if d := time.Until(until); d < 59*time.Minute || d > time.Hour {
		t.Errorf("a paused until %v", until)
	}
	if w := g.Wake(time.Now()); !w.Equal(until) {
		t.Errorf("wake %v, want the pause's end %v", w, until)
	}
	if !g.Admit(a, until.Add(time.Millisecond)) {
		t.Error("a still refused after its pause")
	}
	// Other errors do not pause.
	rel, _ = g.Acquire(b, now)
	rel(errors.New("HTTP 500"))
	if !g.PausedUntil("b", time.Now()).IsZero() {
		t.Error("a 500 paused b")
	}
	if lanes.NewModelGate(&config.Config{}) != nil {
		t.Error("a gate without api models")
	}
}

// TestModelGate_Ready: the sends of a model with an rpm keep 60/rpm apart
// however the claims bunched; a canceled wait returns its cause.
func TestModelGate_Ready(t *testing.T) {
	cfg, err := config.ParseConfig([]byte("models:\n  - {name: r, kind: api, baseURL: \"http://127.0.0.1:9/v1\", rpm: 600}\n"))
	if err != nil {
		t.Fatal(err)
	}
	g := lanes.NewModelGate(cfg)
	// Each send goes 100 ms after the one before it went, the first no
	// earlier than start; this test sees each a moment after it went, so
	// it measures from start: send i comes at least i×100 ms after it.
	start := time.Now()
	var at []time.Time
	for range 4 {
		if err := g.Ready(context.Background(), "r"); err != nil {
			t.Fatal(err)
		}
		at = append(at, time.Now())
	}
	for i := 1; i < len(at); i++ {
		if since := at[i].Sub(start); since < time.Duration(i)*100*time.Millisecond {
			t.Errorf("send %d came %s after the first was asked for, want at least %d ms (rpm 600)", i+1, since, i*100)
		}
	}
	if err := g.Ready(context.Background(), "unlimited"); err != nil {
		t.Error(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(attempt.ErrShutdown)
	// The next turn is 100 ms away: the canceled wait ends at once.
	if err := g.Ready(ctx, "r"); !errors.Is(err, attempt.ErrShutdown) {
		t.Errorf("canceled wait: %v, want the cause", err)
	}
}
