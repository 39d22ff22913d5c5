package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The console's pages over a year of a team's tasks (issue 54): the
// status page, a batch page of 10,000 tasks with its task list (its first
// page and a page deep in its pending tasks) and a task page, served by
// bin/spoolgate run (its lanes paused) over a spool of yearFinished
// finished tasks (finished evenly over the last year, all still in done/:
// no retention, the worst case) and yearPending pending ones; each the
// median of its requests after one warm-up, against the time to list the
// spool's task folders once in the same run (the least any page that
// shows the spool as it is must do).
const (
	yearFinished = 100000
	yearPending  = 10000
	yearBatch    = "year-batch" // 10,000 tasks: half finished, half pending
)

func pagesOverAYear(ctx context.Context, dir string, stderr io.Writer) ([]coreFigure, bool) {
	bin, ok := spoolgateBin(stderr, "the pages over a year of tasks")
	if !ok {
		return nil, false
	}
	figs, err := measurePages(ctx, bin, dir)
	if err != nil {
		fmt.Fprintf(stderr, "bench: pages over a year: %v\n", err)
		return nil, false
	}
	return figs, true
}

func measurePages(ctx context.Context, bin, dir string) ([]coreFigure, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "pages.yaml")
	y := fmt.Sprintf("spool: %q\nhttp: \"127.0.0.1:0\"\nweb: {profiles: %q}\nmodels:\n  - {name: %s, kind: api, baseURL: \"http://127.0.0.1:9/v1\"}\n",
		filepath.Join(dir, "spool"), filepath.Join(dir, "profiles"), bench.APIModel)
	if err := os.WriteFile(cfgPath, []byte(y), 0o644); err != nil {
		return nil, err
	}
	l := spool.NewLayout(filepath.Join(dir, "spool"))
	if err := l.Create(); err != nil {
		return nil, err
	}
	for _, k := range taskfile.Kinds {
		if err := os.WriteFile(l.Paused(k), nil, 0o644); err != nil {
			return nil, err
		}
	}
	now := time.Now().UTC()
	step := 365 * 24 * time.Hour / yearFinished
	put := func(i int, dir string) error {
		id := fmt.Sprintf("t%06d", i)
		batch := fmt.Sprintf("batch-%03d", i/400)
		if i%20 == 0 {
			batch = yearBatch // every 20th finished task and half the pending ones
		}
		t := &taskfile.Task{TaskID: id, ModelKind: taskfile.KindAPI, Model: bench.APIModel, Batch: batch,
			Content: "Write the launch copy for product " + id + ", with a title and three tags.", State: taskfile.StatePending}
		at := now.Add(-365*24*time.Hour + time.Duration(i)*step)
		t.SubmittedAt = at.Add(-time.Minute)
		if dir == taskfile.DirDone {
			t.State, t.Attempt, t.StartedAt, t.FinishedAt, t.Result = taskfile.StateSuccess, 1, at.Add(-12*time.Second), at, "Answer: launch copy "+id
		} else if i%2 == 0 {
			t.Batch, t.SubmittedAt = yearBatch, now.Add(-time.Duration(yearFinished+yearPending-i)*time.Second)
		}
		data, err := t.Encode()
		if err != nil {
			return err
		}
		return os.WriteFile(l.TaskPath(taskfile.KindAPI, dir, id), data, spool.FilePerm)
	}
	for i := range yearFinished + yearPending {
		d := taskfile.DirDone
		if i >= yearFinished {
			d = taskfile.DirPending
		}
		if err := put(i, d); err != nil {
			return nil, err
		}
	}
	// The baseline: every task folder of both lanes listed once.
	var lists []time.Duration
	for range 5 {
		start := time.Now()
		for _, k := range taskfile.Kinds {
			for _, d := range taskfile.TaskDirs {
				if _, err := fsx.ReadDir(l.Lane(k, d)); err != nil {
					return nil, err
				}
			}
		}
		lists = append(lists, time.Since(start))
	}
	list := medianDur(lists)
	// The pages list a folder again only when its mtime has moved, and a
	// listing taken within the racy window of that move does not count
	// (status: racyWindow, 3 s): the steady state of a spool whose last
	// change is older than that is what the first four rows measure; the
	// fifth, a request right after done/ changed.
	if err := sleepCtx(ctx, 3500*time.Millisecond); err != nil {
		return nil, err
	}
	base, stop, err := serveStatus(ctx, bin, cfgPath)
	if err != nil {
		return nil, err
	}
	defer stop()
	pages := []struct{ name, path, what string }{
		{"status page, a year of tasks", "/", "GET /"},
		{"batch page, 10,000 tasks", "/batch/" + yearBatch, "GET /batch/" + yearBatch + " (progress, timeline, the task list's first 50)"},
		{"batch page, deep in its list", "/batch/" + yearBatch + "?state=pending&page=80", "its pending tasks, page 80 of 100"},
		{"task page, a year of tasks", "/task/api/t050000", "GET /task/api/t050000 (a task finished half a year ago)"},
	}
	var out []coreFigure
	done := l.Lane(taskfile.KindAPI, taskfile.DirDone)
	pages = append(pages, struct{ name, path, what string }{"status page, done/ just changed", "/?changed", "GET / right after a task finished (done/'s mtime moved: listed again by names and inodes, only the new files stat'ed)"})
	for _, p := range pages {
		changed := p.path == "/?changed"
		if changed {
			p.path = "/"
		}
		if _, _, err := timedGet(base + p.path); err != nil { // the warm-up
			return nil, err
		}
		var ds []time.Duration
		size := 0
		for i := range 7 {
			if changed { // a task finished: the folder's mtime moves
				at := time.Now().Add(time.Duration(i) * time.Second)
				if err := os.Chtimes(done, at, at); err != nil {
					return nil, err
				}
			}
			d, b, err := timedGet(base + p.path)
			if err != nil {
				return nil, err
			}
			ds, size = append(ds, d), b
		}
		d := medianDur(ds)
		out = append(out, coreFigure{Name: p.name, Value: ms(d), Unit: "ms", Baseline: ms(list), BaseUnit: "ms", Ratio: float64(d) / float64(list),
			Note: fmt.Sprintf("%s of bin/spoolgate run over %d finished (all in done/, over a year) and %d pending tasks, %d KB, median of 7 after a warm-up, against listing the task folders once (%d entries); target at most 50 ms",
				p.what, yearFinished, yearPending, size>>10, yearFinished+yearPending)})
	}
	return out, nil
}
