package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"syscall"
	"time"

	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// timelineTasks is the size of the status page figure's spool.
const timelineTasks = 20000

// statusPageTimeline measures the daemon's status page over n finished
// tasks of the last 24 h (two thirds API, one third web on two sessions,
// one in ten retried once: each with its attempts recorded), with the
// timeline of the last 24 h (/?since=24h) against the same page without
// it (/?since=off), in the same daemon, alternating, each the median of
// its requests after one that warms the page's cache. bin/spoolgate run
// serves it on 127.0.0.1; its lanes are paused. Linux only (bin/spoolgate).
func statusPageTimeline(ctx context.Context, dir string, n int, stderr io.Writer) (coreFigure, bool) {
	bin, ok := spoolgateBin(stderr, "the status page's timeline figure")
	if !ok {
		return coreFigure{}, false
	}
	fig, err := measureTimeline(ctx, bin, dir, n)
	if err != nil {
		fmt.Fprintf(stderr, "bench: status page timeline: %v\n", err)
		return coreFigure{}, false
	}
	return fig, true
}

func measureTimeline(ctx context.Context, bin, dir string, n int) (coreFigure, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return coreFigure{}, err
	}
	cfgPath := filepath.Join(dir, "timeline.yaml")
	y := fmt.Sprintf(`spool: %q
http: "127.0.0.1:0"
api: {concurrency: 3}
web: {profiles: %q}
models:
  - {name: %s, kind: api, baseURL: "http://127.0.0.1:9/v1"}
  - {name: chat, kind: web, site: s}
sites:
  s: {url: "http://127.0.0.1:9/", input: textarea, send: button, answer: .a}
accounts:
  a1: {site: s}
  a2: {site: s}
`, filepath.Join(dir, "spool"), filepath.Join(dir, "profiles"), bench.APIModel)
	if err := os.WriteFile(cfgPath, []byte(y), 0o644); err != nil {
		return coreFigure{}, err
	}
	l := spool.NewLayout(filepath.Join(dir, "spool"))
	if err := l.Create(); err != nil {
		return coreFigure{}, err
	}
	for _, k := range taskfile.Kinds {
		if err := os.WriteFile(l.Paused(k), nil, 0o644); err != nil {
			return coreFigure{}, err
		}
	}
	now := time.Now().UTC()
	step := 24 * time.Hour / time.Duration(n)
	for i := range n {
		k, model, acct := taskfile.KindAPI, bench.APIModel, ""
		if i%3 == 2 {
			k, model, acct = taskfile.KindWeb, "chat", []string{"a1", "a2"}[i/3%2]
		}
		claimed := now.Add(-24*time.Hour + time.Duration(i)*step)
		took := 8*time.Second + time.Duration(i%13)*time.Second
		id := fmt.Sprintf("t%06d", i)
		t := &taskfile.Task{TaskID: id, ModelKind: k, Model: model, Batch: fmt.Sprintf("batch-%03d", i/400), Content: "Write launch copy " + id + ".",
			State: taskfile.StateSuccess, SubmittedAt: claimed.Add(-time.Minute), Account: acct, Owner: "bench:1", Result: "Answer: launch copy " + id}
		if i%10 == 0 {
			t.Attempts = append(t.Attempts, taskfile.AttemptRecord{N: 1, ClaimedAt: claimed, StartedAt: claimed, EndedAt: claimed.Add(took / 2),
				Outcome: taskfile.AttemptRetried, ErrorClass: taskfile.ClassTransient, Owner: "bench:1", Account: acct})
			claimed = claimed.Add(took/2 + time.Second)
		}
		t.Attempt = len(t.Attempts) + 1
		t.Attempts = append(t.Attempts, taskfile.AttemptRecord{N: t.Attempt, ClaimedAt: claimed, StartedAt: claimed, EndedAt: claimed.Add(took),
			Outcome: taskfile.AttemptSuccess, Owner: "bench:1", Account: acct})
		t.StartedAt, t.FinishedAt = claimed, claimed.Add(took)
		data, err := t.Encode()
		if err != nil {
			return coreFigure{}, err
		}
		if err := os.WriteFile(l.TaskPath(k, taskfile.DirDone, id), data, spool.FilePerm); err != nil {
			return coreFigure{}, err
		}
	}
	base, stop, err := serveStatus(ctx, bin, cfgPath)
	if err != nil {
		return coreFigure{}, err
	}
	defer stop()
	get := func(q string) (time.Duration, int, error) { return timedGet(base + "/" + q) }
	// Warm the page's cache of parsed task files, as a page that has been
	// open for a while has it.
	for _, q := range []string{"?since=off", "?since=24h"} {
		if _, _, err := get(q); err != nil {
			return coreFigure{}, err
		}
	}
	var with, without []time.Duration
	var size, sizeOff int
	for range 15 {
		d, b, err := get("?since=24h")
		if err != nil {
			return coreFigure{}, err
		}
		with, size = append(with, d), b
		if d, b, err = get("?since=off"); err != nil {
			return coreFigure{}, err
		}
		without, sizeOff = append(without, d), b
	}
	w, wo := medianDur(with), medianDur(without)
	svg := size - sizeOff
	return coreFigure{Name: "status page, 24 h timeline", Value: ms(w), Unit: "ms", Baseline: ms(wo), BaseUnit: "ms", Ratio: float64(w) / float64(wo),
		Note: fmt.Sprintf("GET / of bin/spoolgate run over %d finished tasks of the last 24 h (%d attempts recorded, 3 API slots and 2 web sessions) with ?since=24h (the page with its timeline, %d KB of it SVG) against ?since=off (the same page without it), alternating, median of 15 each after a warm-up; target ratio at most 2",
			n, n+n/10, svg>>10)}, nil
}

// serveStatus starts bin run on cfgPath and returns the address of its
// status page (from its log) and the function that stops it.
func serveStatus(ctx context.Context, bin, cfgPath string) (string, func(), error) {
	cmd := exec.CommandContext(ctx, bin, "run", "--config", cfgPath)
	pr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }
	re := regexp.MustCompile(`status page.*url=(http://127\.0\.0\.1:\d+)/`)
	sc := bufio.NewScanner(pr)
	var base string
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if base == "" {
		stop()
		return "", nil, fmt.Errorf("%s did not report its status page", bin)
	}
	return base, stop, nil
}

var pageClient = &http.Client{Timeout: time.Minute}

// timedGet GETs url whole and says how long it took and how many bytes
// it read; anything but a 200 is an error.
func timedGet(url string) (time.Duration, int, error) {
	start := time.Now()
	resp, err := pageClient.Get(url)
	if err != nil {
		return 0, 0, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return time.Since(start), len(b), nil
}

// medianDur is the middle of ds (sorted in place).
func medianDur(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}
