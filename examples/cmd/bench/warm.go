package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// warmTasks is how many tasks each half of the warm row runs.
const warmTasks = 8

// warmAnswer is each task's answer's own streaming time (scale 1).
const warmAnswer = time.Second

// warmFigures is issue 42's row: the per-task cost beyond the answer
// (claim → final durable write, less the answer's own streaming time) on
// one session with a warm browser (web.warm, the default) beside a cold
// start per task (web.warm.off), in the same run, on the same signed-in
// profile and stand-in page, through spoolgate's own web lane and a real
// headless Chromium. Target: at most 0.3 s median warm.
func warmFigures(ctx context.Context, o options, stderr io.Writer) ([]coreFigure, error) {
	stand, dir, done, err := webBenchStart(o, "bench-warm-*")
	if stand == nil || err != nil {
		return nil, err // no stand-in and no error: no row on this OS
	}
	defer done()
	fmt.Fprintf(stderr, "bench: web warm vs cold: %d + %d tasks through a real browser ...\n", warmTasks, warmTasks)
	cold, coldLaunches, err := warmHalf(ctx, dir, stand, false)
	if err != nil {
		return nil, fmt.Errorf("cold: %w", err)
	}
	warm, warmLaunches, err := warmHalf(ctx, dir, stand, true)
	if err != nil {
		return nil, fmt.Errorf("warm: %w", err)
	}
	w, c := pct(warm, 50), pct(cold, 50)
	ratio := 0.0
	if c > 0 {
		ratio = float64(w) / float64(c)
	}
	return []coreFigure{{Name: "web warm beyond ans.", Value: ms(w), Unit: "ms", Baseline: ms(c), BaseUnit: "ms", Ratio: ratio,
		Note: fmt.Sprintf("median of %d per task, claim → final write less the answer's %s, one session: warm browser (%d launch(es); p95 %.0f ms) vs a cold start per task (%d launches; p95 %.0f ms); target ≤ 300 ms warm",
			warmTasks, warmAnswer, warmLaunches, ms(pct(warm, 95)), coldLaunches, ms(pct(cold, 95)))}}, nil
}

// warmHalf runs warmTasks tasks one after another on one session, warm or
// cold, and returns each task's cost beyond the answer and the launches.
func warmHalf(ctx context.Context, dir string, stand *chatstand.Server, warm bool) ([]time.Duration, int64, error) {
	name := map[bool]string{false: "cold", true: "warm"}[warm]
	y := fmt.Sprintf(`spool: %q
settle: 50ms
maxRetries: 0
http: "off"
web: {profiles: %q, instance: bench, taskTimeout: 2m, warm: {off: %t}}
models:
  - {name: proof, kind: web, site: standin-md, account: demo, needEmptyPrompt: true}
sites:
%s`, filepath.Join(dir, name, "spool"), filepath.Join(dir, "profiles"), !warm, testkit.StandinMarkdownSite(stand.URL()))
	cfg, err := config.ParseConfig([]byte(y))
	if err != nil {
		return nil, 0, err
	}
	if !warm { // the first half signs the shared profile in
		if err := signIn(ctx, cfg, stand.URL()); err != nil {
			return nil, 0, fmt.Errorf("sign the profile in: %w", err)
		}
	}
	// All dropped at once: the session hands over from task to task, as in
	// a batch (a session with nothing pending gives its browser up).
	var drops []taskfile.Task
	for i := range warmTasks {
		id := fmt.Sprintf("%s-%02d", name, i)
		drops = append(drops, taskfile.Task{TaskID: id, Model: "proof", Content: fmt.Sprintf("[[duration=%s]] %s", warmAnswer, id)})
	}
	ex := browser.NewExecutor(cfg, slog.New(slog.DiscardHandler))
	tasks, finals, err := runWebTasks(ctx, spool.NewStore(cfg, nil), ex, drops, 5*time.Minute)
	if err != nil {
		return nil, 0, err
	}
	var cost []time.Duration
	for id, t := range tasks {
		if t.State != taskfile.StateSuccess {
			return nil, 0, fmt.Errorf("task %s: %s: %s", id, t.State, t.Error)
		}
		cost = append(cost, finals[id].Sub(t.StartedAt)-warmAnswer)
	}
	return cost, ex.Launches(), nil
}

// webBenchStart starts the chat stand-in's modern page (scale 1) and a
// temporary folder under o.dir for a row through a real browser; done
// removes both. Without /proc it returns no stand-in and no error.
func webBenchStart(o options, pattern string) (*chatstand.Server, string, func(), error) {
	if _, err := os.Stat("/proc/self"); err != nil {
		return nil, "", nil, nil // the browser's self-check is Linux's; elsewhere no row
	}
	stand, err := chatstand.Start(chatstand.Options{Renderer: "markdown-it", Scale: 1})
	if err != nil {
		return nil, "", nil, err
	}
	dir, err := os.MkdirTemp(o.dir, pattern)
	if err != nil {
		_ = stand.Close()
		return nil, "", nil, err
	}
	return stand, dir, func() { _ = stand.Close(); _ = os.RemoveAll(dir) }, nil
}

// runWebTasks runs the web lane of store with executor ex, drops tasks in
// its incoming folder and waits, at most within, for all to end; it
// returns each final task and the moment its final write was done (the
// lane's OnAttemptEnd runs right after it), by id.
func runWebTasks(ctx context.Context, store *spool.Store, ex attempt.Executor, drops []taskfile.Task, within time.Duration) (map[string]*taskfile.Task, map[string]time.Time, error) {
	var mu sync.Mutex
	finals := map[string]time.Time{}
	tasks := map[string]*taskfile.Task{}
	allDone := make(chan struct{})
	d := &lanes.Daemon{Store: store, Executors: map[taskfile.Kind]attempt.Executor{taskfile.KindWeb: ex},
		Log: slog.New(slog.DiscardHandler),
		Hooks: lanes.Hooks{OnAttemptEnd: func(_ taskfile.Kind, t *taskfile.Task, _ time.Duration) {
			if !t.State.Final() {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			finals[t.TaskID], tasks[t.TaskID] = time.Now(), t.Clone()
			if len(finals) == len(drops) {
				close(allDone)
			}
		}}}
	if err := d.Start(ctx); err != nil {
		return nil, nil, err
	}
	defer stopDaemon(d)
	for _, t := range drops {
		data, err := t.Encode()
		if err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(filepath.Join(store.Layout.Incoming(), t.TaskID+".yaml"), data, 0o600); err != nil {
			return nil, nil, err
		}
	}
	select {
	case <-allDone:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-time.After(within):
		mu.Lock()
		defer mu.Unlock()
		return nil, nil, fmt.Errorf("the web tasks did not all end within %s (%d of %d)", within, len(finals), len(drops))
	}
	mu.Lock()
	defer mu.Unlock()
	return tasks, finals, nil
}
