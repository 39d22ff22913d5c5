package main

// The spool core's figures that need 100,000 files (start-up time, peak
// memory, retention, the status page's timeline); core.go has the ones
// that compare the daemon's file work with the disk's own.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func measureScale(ctx context.Context, o options, root string, stderr io.Writer) ([]coreFigure, error) {
	var out []coreFigure
	var f coreFigure
	var err error
	if o.coreFiles > 0 {
		fmt.Fprintf(stderr, "bench: writing %d pending files for the start-up figure ...\n", o.coreFiles)
		f, err = startup(ctx, filepath.Join(root, "startup"), o.coreFiles)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
		if f, ok := startupRSS(ctx, filepath.Join(root, "startup"), filepath.Join(root, "empty"), o.coreFiles, stderr); ok {
			out = append(out, f)
		}
		fmt.Fprintf(stderr, "bench: writing %d finished files for the retention figure ...\n", o.coreFiles)
		if f, err = statusRetention(filepath.Join(root, "retention"), o.coreFiles); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	fmt.Fprintf(stderr, "bench: writing %d finished files for the status page's timeline figure ...\n", timelineTasks)
	if f, ok := statusPageTimeline(ctx, filepath.Join(root, "timeline"), timelineTasks, stderr); ok {
		out = append(out, f)
	}
	fmt.Fprintf(stderr, "bench: writing %d finished and %d pending files for the pages over a year ...\n", yearFinished, yearPending)
	if fs, ok := pagesOverAYear(ctx, filepath.Join(root, "pages"), stderr); ok {
		out = append(out, fs...)
	}
	return out, nil
}

// startupRSS runs bin/spoolgate on the start-up spool (its api lane paused)
// and on an empty one, and compares the peak resident memory (VmHWM) each
// has when it reports itself started. Linux only; skipped without
// bin/spoolgate (make bench builds it).
func startupRSS(ctx context.Context, full, empty string, n int, stderr io.Writer) (coreFigure, bool) {
	bin, ok := spoolgateBin(stderr, "peak RSS at start-up")
	if !ok {
		return coreFigure{}, false
	}
	measure := func(dir string) (kb int, took time.Duration, err error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, 0, err
		}
		cfgPath := filepath.Join(dir, "rss.yaml")
		y := fmt.Sprintf("spool: %q\nhttp: \"off\"\nweb: {profiles: %q}\nmodels:\n  - {name: %s, kind: api, baseURL: \"http://127.0.0.1:9/v1\"}\n",
			filepath.Join(dir, "spool"), filepath.Join(dir, "profiles"), bench.APIModel)
		if err := os.WriteFile(cfgPath, []byte(y), 0o644); err != nil {
			return 0, 0, err
		}
		l := spool.NewLayout(filepath.Join(dir, "spool"))
		if err := l.Create(); err != nil {
			return 0, 0, err
		}
		if err := os.WriteFile(l.Paused(taskfile.KindAPI), nil, 0o644); err != nil {
			return 0, 0, err
		}
		cmd := exec.CommandContext(ctx, bin, "run", "--config", cfgPath)
		pr, err := cmd.StderrPipe()
		if err != nil {
			return 0, 0, err
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return 0, 0, err
		}
		defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "msg=started") {
				took = time.Since(start)
				break
			}
		}
		go func() { _, _ = io.Copy(io.Discard, pr) }()
		if took == 0 {
			return 0, 0, fmt.Errorf("%s did not report itself started", bin)
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		if err != nil {
			return 0, 0, err
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
				kb, _ = strconv.Atoi(f[1])
			}
		}
		return kb, took, nil
	}
	fullKB, fullTook, err := measure(full)
	if err != nil {
		fmt.Fprintf(stderr, "bench: peak RSS: %v\n", err)
		return coreFigure{}, false
	}
	emptyKB, _, err := measure(empty)
	if err != nil {
		fmt.Fprintf(stderr, "bench: peak RSS: %v\n", err)
		return coreFigure{}, false
	}
	return coreFigure{Name: "start-up peak RSS", Value: float64(fullKB) / 1024, Unit: "MB", Baseline: float64(emptyKB) / 1024, Ratio: float64(fullKB) / float64(emptyKB),
		Note: fmt.Sprintf("bin/spoolgate run with %d pending files: VmHWM when it reports itself started (after %.2f s, process start included); target under 100 MB; baseline: the same on an empty spool", n, fullTook.Seconds())}, true
}

// startup writes n pending tasks (the api lane paused, so none runs) and
// measures Daemon.Start: recovery, the pending index, lanes and watcher.
// The baseline is listing the folder and reading every file, nothing more.
func startup(ctx context.Context, dir string, n int) (coreFigure, error) {
	cfg, err := bench.Config(dir, "http://127.0.0.1:9/v1", "http://127.0.0.1:9/", 5, 2, time.Second)
	if err != nil {
		return coreFigure{}, err
	}
	l := spool.NewLayout(cfg.Spool)
	if err := l.Create(); err != nil {
		return coreFigure{}, err
	}
	if err := os.WriteFile(l.Paused(taskfile.KindAPI), nil, 0o644); err != nil {
		return coreFigure{}, err
	}
	pend := l.Lane(taskfile.KindAPI, taskfile.DirPending)
	t0 := time.Now().Add(-time.Hour)
	for i := range n {
		id := fmt.Sprintf("st-%06d", i)
		t := &taskfile.Task{TaskID: id, ModelKind: taskfile.KindAPI, Model: bench.APIModel, Content: "Write launch copy " + id + ".",
			State: taskfile.StatePending, SubmittedAt: t0.Add(time.Duration(i) * time.Millisecond)}
		data, err := t.Encode()
		if err != nil {
			return coreFigure{}, err
		}
		if err := os.WriteFile(filepath.Join(pend, id+".yaml"), data, 0o644); err != nil {
			return coreFigure{}, err
		}
	}
	// Baseline: list and read every file.
	start := time.Now()
	ents, err := os.ReadDir(pend)
	if err != nil {
		return coreFigure{}, err
	}
	for _, e := range ents {
		if _, err := os.ReadFile(filepath.Join(pend, e.Name())); err != nil {
			return coreFigure{}, err
		}
	}
	raw := time.Since(start)

	store := spool.NewStore(cfg, nil)
	d := &lanes.Daemon{Store: store, Executors: map[taskfile.Kind]attempt.Executor{taskfile.KindAPI: &instant{}}}
	start = time.Now()
	if err := d.Start(ctx); err != nil {
		return coreFigure{}, err
	}
	took := time.Since(start)
	indexed := d.Lane(taskfile.KindAPI).Index().Len()
	stopDaemon(d)
	if indexed != n {
		return coreFigure{}, fmt.Errorf("start-up: %d of %d pending tasks indexed", indexed, n)
	}
	return coreFigure{Name: "start-up", Value: took.Seconds(), Unit: "s", Baseline: raw.Seconds(), Ratio: took.Seconds() / raw.Seconds(),
		Note: fmt.Sprintf("Daemon.Start with %d pending files (all indexed), warm cache; baseline: list the folder and read every file once", n)}, nil
}

// spoolgateBin is bin/spoolgate (make bench builds it), for the figures
// that run the real command; without it, or off Linux, it says which
// figure is skipped and reports false.
func spoolgateBin(stderr io.Writer, figure string) (string, bool) {
	bin, err := filepath.Abs(filepath.Join("bin", "spoolgate"))
	if err != nil {
		return "", false
	}
	if _, err := os.Stat(bin); err != nil || runtime.GOOS != "linux" {
		fmt.Fprintf(stderr, "bench: no %s on linux: %s skipped\n", bin, figure)
		return "", false
	}
	return bin, true
}
