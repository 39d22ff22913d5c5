package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// historyDays is how long the field report's team ran spoolgate's
// predecessor: a year and a half of 400-task batches.
const historyDays = 548

// statusRetention measures `spoolgate status` (a fresh snapshot, as each
// run of the command takes) over n finished tasks that finished evenly
// over historyDays: first with every task in done/ (no retention), then
// with `retention: {done: 30d}`, the older tasks moved to
// archive/YYYY-MM/done/ as the daemon's archive pass lays them out. The
// figure is the time with retention; the baseline the time without.
func statusRetention(dir string, n int) (coreFigure, error) {
	cfg, err := bench.Config(dir, "http://127.0.0.1:9/v1", "http://127.0.0.1:9/", 3, 2, time.Second)
	if err != nil {
		return coreFigure{}, err
	}
	st := spool.NewStore(cfg, nil)
	if err := st.Layout.Create(); err != nil {
		return coreFigure{}, err
	}
	now := time.Now().UTC()
	span := historyDays * 24 * time.Hour
	step := span / time.Duration(n) // i*span would overflow
	fin := func(i int) time.Time { return now.Add(-span + time.Duration(i)*step) }
	for i := range n {
		id := fmt.Sprintf("t%06d", i)
		f := fin(i)
		t := &taskfile.Task{TaskID: id, ModelKind: taskfile.KindAPI, Model: bench.APIModel, Batch: fmt.Sprintf("batch-%04d", i/400),
			Content: "Write launch copy " + id + ".", State: taskfile.StateSuccess, Attempt: 1,
			SubmittedAt: f.Add(-time.Minute), StartedAt: f.Add(-15 * time.Second), FinishedAt: f, Result: "Answer: launch copy " + id}
		data, err := t.Encode()
		if err != nil {
			return coreFigure{}, err
		}
		p := st.Layout.TaskPath(taskfile.KindAPI, taskfile.DirDone, id)
		if err := os.WriteFile(p, data, spool.FilePerm); err != nil {
			return coreFigure{}, err
		}
		if err := os.Chtimes(p, f, f); err != nil {
			return coreFigure{}, err
		}
	}
	measure := func() (time.Duration, error) {
		var ds []time.Duration
		for range 3 {
			start := time.Now()
			if _, err := status.NewSnapshotter(st, nil).Snapshot(now); err != nil {
				return 0, err
			}
			ds = append(ds, time.Since(start))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[1], nil
	}
	without, err := measure()
	if err != nil {
		return coreFigure{}, err
	}
	cutoff := now.Add(-30 * 24 * time.Hour)
	kept := 0
	for i := range n {
		f := fin(i)
		if f.After(cutoff) {
			kept++
			continue
		}
		id := fmt.Sprintf("t%06d", i)
		month := filepath.Join(st.Layout.Archive(taskfile.KindAPI), f.Format("2006-01"), taskfile.DirDone)
		if err := os.MkdirAll(month, spool.DirPerm); err != nil {
			return coreFigure{}, err
		}
		if err := os.Rename(st.Layout.TaskPath(taskfile.KindAPI, taskfile.DirDone, id), filepath.Join(month, id+".yaml")); err != nil {
			return coreFigure{}, err
		}
	}
	with, err := measure()
	if err != nil {
		return coreFigure{}, err
	}
	return coreFigure{Name: "status, retention", Value: ms(with), Unit: "ms", Baseline: ms(without), BaseUnit: "ms",
		Ratio: float64(with) / float64(without),
		Note:  fmt.Sprintf("status over %d finished tasks of %d days (median of 3 fresh snapshots) with retention done: 30d (%d left in done/, the rest in archive/YYYY-MM/); baseline: the same spool without retention; target ratio at most 0.10", n, historyDays, kept)}, nil
}
