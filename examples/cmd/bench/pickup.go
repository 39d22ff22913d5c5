package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// handover times the file operations a lane does around each attempt,
// through the same lease calls the lanes make: claim = Store.Claim (move
// pending→running) + Lease.Mark (read, durable rewrite as running); finish
// = Lease.Finish (fenced rewrite with the outcome, move running→done). The
// baseline is one durable write, as throughput's and pickup's: the mean of
// the disk's rate just before and just after the attempts.
func handover(dir string, n int) (coreFigure, error) {
	cfg, err := bench.Config(dir, "http://127.0.0.1:9/v1", "http://127.0.0.1:9/", 5, 2, time.Second)
	if err != nil {
		return coreFigure{}, err
	}
	store := spool.NewStore(cfg, nil)
	if err := store.Layout.Create(); err != nil {
		return coreFigure{}, err
	}
	k := taskfile.KindAPI
	in := store.Layout.Lane(k, taskfile.DirIncoming)
	for i := range n {
		id := fmt.Sprintf("ho-%04d", i)
		if _, err := store.Submit(in, id, taskData(id)); err != nil {
			return coreFigure{}, err
		}
		if res, err := store.Intake(in, id+".yaml", k); err != nil || res.Outcome != spool.Accepted {
			return coreFigure{}, fmt.Errorf("hand-over: intake of %s: %v (%s)", id, err, res.Reason)
		}
	}
	before, err := rawWrites(filepath.Join(dir, "raw-before"), 200)
	if err != nil {
		return coreFigure{}, err
	}
	var claim, finish time.Duration
	for i := range n {
		id := fmt.Sprintf("ho-%04d", i)
		start := time.Now()
		lease, err := store.Claim(k, id, "bench:1")
		if err != nil {
			return coreFigure{}, err
		}
		if _, err := lease.Mark(time.Now()); err != nil {
			return coreFigure{}, err
		}
		mid := time.Now()
		claim += mid.Sub(start)
		if _, err := lease.Finish(spool.Outcome{State: taskfile.StateSuccess, Result: "ok"}, time.Now()); err != nil {
			return coreFigure{}, err
		}
		finish += time.Since(mid)
	}
	after, err := rawWrites(filepath.Join(dir, "raw-after"), 200)
	if err != nil {
		return coreFigure{}, err
	}
	c, f := ms(claim/time.Duration(n)), ms(finish/time.Duration(n))
	one := 1000 / ((before + after) / 2)
	return coreFigure{Name: "hand-over", Value: c + f, Unit: "ms", Baseline: one, Ratio: (c + f) / one,
		Note: fmt.Sprintf("the lane's file work per attempt, %d tasks one after another: claim %.1f ms (move, read, durable rewrite) + finish %.1f ms (fenced durable rewrite, move); baseline: one durable atomic write (%.0f writes/s just before, %.0f just after)", n, c, f, before, after)}, nil
}

// pickup drops one task at a time into an idle daemon and measures the
// time from the drop's rename to the executor's call; the baseline is the
// same rename seen by a bare fsnotify watcher.
func pickup(ctx context.Context, dir string, n int) (coreFigure, error) {
	return pickupMode(ctx, dir, n, false)
}

// pollRescan and pollSettle are the poll-mode pickup's periods: the target
// is a pickup within rescan + 50 ms.
const pollRescan, pollSettle = time.Second, 500 * time.Millisecond

// pickupPoll is pickup with `poll: true` (no fsnotify, as on a network
// share): a drop is seen at the next rescan and taken once its mtime is
// settle old. The baseline is the rescan period itself.
func pickupPoll(ctx context.Context, dir string, n int) (coreFigure, error) {
	return pickupMode(ctx, dir, n, true)
}

func pickupMode(ctx context.Context, dir string, n int, poll bool) (coreFigure, error) {
	var mu sync.Mutex
	called := map[string]chan time.Time{}
	ex := &instant{onRun: func(id string) {
		mu.Lock()
		ch := called[id]
		mu.Unlock()
		if ch != nil {
			ch <- time.Now()
		}
	}}
	d, store, err := coreDaemon(ctx, dir, ex, nil, func(c *config.Config) {
		if poll {
			c.Poll, c.Rescan, c.Settle = true, config.Duration(pollRescan), config.Duration(pollSettle)
		}
	})
	if err != nil {
		return coreFigure{}, err
	}
	defer stopDaemon(d)
	in := store.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	var raw float64
	if !poll {
		// The baseline beside the run, as throughput's: the mean of the
		// disk's rate just before and just after the drops.
		if raw, err = rawWrites(filepath.Join(dir, "raw-before"), 200); err != nil {
			return coreFigure{}, err
		}
	}
	var lat []time.Duration
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		id := fmt.Sprintf("pk-%04d", i)
		ch := make(chan time.Time, 1)
		mu.Lock()
		called[id] = ch
		mu.Unlock()
		if poll {
			// Real drops come at any moment of the rescan cycle; one right
			// after the previous pickup would always land just after a
			// rescan and wait a whole period. Spread them over the cycle.
			time.Sleep(time.Duration(rng.Int64N(int64(pollRescan))))
		}
		if _, err := store.Submit(in, id, taskData(id)); err != nil {
			return coreFigure{}, err
		}
		dropped := time.Now()
		select {
		case at := <-ch:
			lat = append(lat, at.Sub(dropped))
		case <-time.After(30 * time.Second):
			return coreFigure{}, fmt.Errorf("pickup: %s not picked up in 30s", id)
		}
	}
	p50 := bench.Percentile(lat, 50)
	if poll {
		bound := ms(pollRescan)
		return coreFigure{Name: "pickup, poll p50", Value: ms(p50), Unit: "ms", Baseline: bound, Ratio: ms(p50) / bound,
			Note: fmt.Sprintf("poll: true (no fsnotify), rescan %s, settle %s, %d drops one at a time: p99 %.0f ms, max %.0f ms; target under rescan + 50 ms; baseline: the rescan period",
				pollRescan, pollSettle, n, ms(bench.Percentile(lat, 99)), ms(bench.Percentile(lat, 100)))}, nil
	}
	after, err := rawWrites(filepath.Join(dir, "raw-after"), 200)
	if err != nil {
		return coreFigure{}, err
	}
	base, err := rawPickup(filepath.Join(dir, "raw"), n)
	if err != nil {
		return coreFigure{}, err
	}
	one := 1000 / ((raw + after) / 2) // ms per durable write
	return coreFigure{Name: "pickup latency p50", Value: ms(p50), Unit: "ms", Baseline: one, Ratio: ms(p50) / one,
		Note: fmt.Sprintf("drop renamed into api/incoming/ → executor called, %d drops one at a time (p95 %.1f ms); the ratio is in durable writes (target 4 or fewer: intake and mark each rewrite the task durably); baseline: one durable atomic write (%.0f writes/s just before, %.0f just after); a bare fsnotify watcher sees the rename in %.2f ms p50",
			n, ms(bench.Percentile(lat, 95)), raw, after, ms(bench.Percentile(base, 50)))}, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func rawPickup(dir string, n int) ([]time.Duration, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		return nil, err
	}
	var out []time.Duration
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("pk-%04d.yaml", i))
		if err := fsx.WriteFileNew(name, taskData("x")); err != nil {
			return nil, err
		}
		dropped := time.Now()
		for {
			select {
			case ev := <-w.Events:
				if ev.Name != name || !ev.Has(fsnotify.Create) {
					continue
				}
				out = append(out, time.Since(dropped))
			case err := <-w.Errors:
				return nil, err
			case <-time.After(10 * time.Second):
				return nil, fmt.Errorf("raw pickup: no event for %s", name)
			}
			break
		}
	}
	return out, nil
}
