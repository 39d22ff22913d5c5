package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// coreFigure is one spool-core measurement beside its baseline, measured
// in the same run on the same folder.
type coreFigure struct {
	Name     string  `json:"name"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Baseline float64 `json:"baseline"`
	BaseUnit string  `json:"baselineUnit"`
	Ratio    float64 `json:"ratio"`
	Note     string  `json:"note"`
}

// instant is an API executor that answers at once: the spool's own costs
// are all that is left.
type instant struct {
	calls atomic.Int64
	onRun func(id string)
}

func (e *instant) Execute(_ context.Context, job *attempt.Job) (attempt.Result, error) {
	e.calls.Add(1)
	if e.onRun != nil {
		e.onRun(job.Task.TaskID)
	}
	return attempt.Result{Text: "ok"}, nil
}

// coreDaemon starts a daemon with only an API lane on a fresh spool in dir.
func coreDaemon(ctx context.Context, dir string, ex attempt.Executor, done func(*taskfile.Task), tune ...func(*config.Config)) (*lanes.Daemon, *spool.Store, error) {
	cfg, err := bench.Config(dir, "http://127.0.0.1:9/v1", "http://127.0.0.1:9/", 5, 2, 10*time.Millisecond)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range tune {
		f(cfg)
	}
	store := spool.NewStore(cfg, nil)
	d := &lanes.Daemon{Store: store, Executors: map[taskfile.Kind]attempt.Executor{taskfile.KindAPI: ex},
		Hooks: lanes.Hooks{OnAttemptEnd: func(_ taskfile.Kind, t *taskfile.Task, _ time.Duration) {
			if done != nil && t.State.Final() {
				done(t)
			}
		}}}
	if err := d.Start(ctx); err != nil {
		return nil, nil, err
	}
	return d, store, nil
}

func stopDaemon(d *lanes.Daemon) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d.Shutdown(ctx)
}

func taskData(id string) []byte {
	data, _ := (&taskfile.Task{TaskID: id, Model: bench.APIModel, Content: "Write launch copy " + id + "."}).Encode()
	return data
}

// How long ext4 without a journal keeps a freed inode from reuse
// (fs/ext4/ialloc.c, recently_deleted): RECENTCY_MIN, and RECENTCY_DIRTY
// more while the inode's table block is dirty, as a large removal leaves
// them. freedWindow, a second past the first, is the wait where the core's
// folder cannot have block groups of its own; freedAge, a second past
// both, the wait after the bench's own clean-up (awaitCleaned).
const (
	recencyMin   = 60 * time.Second
	recencyDirty = 300 * time.Second
	freedWindow  = recencyMin + time.Second
	freedAge     = recencyMin + recencyDirty + time.Second
)

// sleepCtx waits d, or less if ctx ends first (its error then).
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// measureDisk gives the figures that compare the daemon's file work with
// the disk's own (throughput, hand-over, pickup), in root; measureScale
// the ones with 100,000 files (start-up, memory, retention, timeline).
//
// On ext4 without a journal every file created in the minute after a
// deletion (six while the freed inode's table block is dirty) walks past
// the freed inodes of its block group (see markTopdir): just after 30,000
// deletions the same code read 0.15-0.23 × one write. So runBench measures
// these figures before the strategies (whose spools are removed as each
// run ends) and removes root only when all is done (its clean-up would
// cost the strategies' hand-overs), and here, on such a file system,
// waits out the last run's clean-up (awaitCleaned) and puts root's
// folders in the first block group where a create is cheap (freshGroup),
// or where it cannot choose, waits out the minute for whatever was
// deleted before the bench began.
func measureDisk(ctx context.Context, root string, stderr io.Writer) ([]coreFigure, error) {
	if fs := fsInfo(root); strings.HasSuffix(fs, "no journal") {
		if err := awaitCleaned(ctx, filepath.Dir(root), stderr); err != nil {
			return nil, err
		}
		if err := fsx.MarkTopdir(root); err != nil {
			fmt.Fprintf(stderr, "bench: the spool is on %s, and its folders cannot have block groups of their own (%v): waiting %s for the inodes freed before the bench to age ...\n", fs, err, freedWindow)
			if err := sleepCtx(ctx, freedWindow); err != nil {
				return nil, err
			}
		} else {
			place, costs, err := freshGroup(root)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(stderr, "bench: the core's folders are in %s: a file create cost %s µs in the block groups tried\n", filepath.Base(place), costs)
			root = place
		}
	}
	out, err := throughput(ctx, filepath.Join(root, "tp"), 1000, filepath.Join(root, "raw-tp"))
	if err != nil {
		return nil, err
	}
	f, err := handover(filepath.Join(root, "handover"), 100)
	if err != nil {
		return nil, err
	}
	out = append(out, f)
	f, err = pickup(ctx, filepath.Join(root, "pickup"), 50)
	if err != nil {
		return nil, err
	}
	out = append(out, f)
	f, err = pickupPoll(ctx, filepath.Join(root, "pickup-poll"), 20)
	if err != nil {
		return nil, err
	}
	out = append(out, f)
	return out, nil
}

// cleanedStamp is the file, in the folder the bench works in, whose mtime
// is when a run of the bench last removed its core folder (over 200,000
// files with the scale figures).
const cleanedStamp = ".spoolgate-bench-cleaned"

// markCleaned records that the bench just removed its core folder from
// dir (see awaitCleaned): the write sets the stamp's mtime, an existing
// stamp's too (O_TRUNC).
func markCleaned(dir string) {
	os.WriteFile(filepath.Join(dir, cleanedStamp), nil, 0o644)
}

// awaitCleaned waits until freedAge has passed since the last run of the
// bench removed its files from dir: run back to back, each run began
// seconds after the last one's clean-up, and its creates grew from 13 µs
// to 400-750 µs within its own bursts (measured here), as its files were
// allocated into the groups beside the freed inodes. Nothing else on a
// quiet machine removes that many files.
func awaitCleaned(ctx context.Context, dir string, stderr io.Writer) error {
	fi, err := os.Stat(filepath.Join(dir, cleanedStamp))
	if err != nil {
		return nil // no run before this one
	}
	wait := freedAge - time.Since(fi.ModTime())
	if wait <= 0 {
		return nil
	}
	fmt.Fprintf(stderr, "bench: the last run removed its files %s ago: waiting %s for the inodes it freed to age (ext4 without a journal) ...\n",
		time.Since(fi.ModTime()).Round(time.Second), wait.Round(time.Second))
	return sleepCtx(ctx, wait)
}

// freshGroup makes up to freshTries folders in root (marked by
// markTopdir, so each goes where ext4 places a top-level folder: a block
// group with few folders and many free inodes, which is also the group
// that the last large removal just emptied) and returns the first where a
// file create costs under freshCreate, else the cheapest, with the cost in
// each tried. The bench's own clean-up of a run (over 100,000 files) is
// seconds before the next run begins; every create beside those inodes
// would walk them for up to six minutes (see markTopdir).
func freshGroup(root string) (string, string, error) {
	best, bestCost := "", 0.0
	var costs []string
	for i := range freshTries {
		d := filepath.Join(root, fmt.Sprintf("g%d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", "", err
		}
		c, err := createCost(d, "probe")
		if err != nil {
			return "", "", err
		}
		costs = append(costs, fmt.Sprintf("%.0f", c))
		if best == "" || c < bestCost {
			best, bestCost = d, c
		}
		if c < freshCreate {
			break
		}
	}
	return best, strings.Join(costs, ", "), nil
}

// freshTries and freshCreate bound freshGroup's search: a create in a
// block group nothing was deleted from lately costs 20-30 µs here.
const (
	freshTries  = 8
	freshCreate = 60.0 // µs
)

// createCost is the mean time of one file create in dir, in µs, from 50
// creates of empty files (kept: a removal would make the next creates
// dearer, see markTopdir). A task's log is one create: on ext4 without a
// journal a create costs 20-30 µs in a block group nothing was deleted
// from lately and over 1,000 µs beside thousands of fresh deletions, so
// the figure says which disk the bursts met.
func createCost(dir, tag string) (float64, error) {
	const n = 50
	start := time.Now()
	for i := range n {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf(".create-probe-%s-%02d", tag, i)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
		if err != nil {
			return 0, err
		}
		f.Close()
	}
	return float64(time.Since(start).Microseconds()) / n, nil
}

// rawWrites is the file system's raw limit: durable atomic writes of a
// task-sized file per second (write a temp, fsync, rename, fsync the folder).
func rawWrites(dir string, n int) (float64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	data := taskData("raw-000000")
	start := time.Now()
	for i := range n {
		if err := fsx.WriteFileAtomic(filepath.Join(dir, fmt.Sprintf("raw-%06d.yaml", i)), data); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// throughputRounds is how many bursts throughput drops, each between two
// measurements of the disk's own rate.
const throughputRounds = 5

// throughput drops n tasks, in throughputRounds bursts, into a running
// daemon whose executor answers at once, and measures tasks finished per
// second, drops included, against two baselines taken beside each burst:
//
//   - one durable write: the disk's rate of one writer just before and
//     just after the burst (100 durable writes each, in rawDir). This
//     disk's rate moves by more than half within seconds, so only rates
//     taken beside a burst compare with it. It is the unit, but a
//     task costs eleven fsyncs against its two, spread over seven writers,
//     so the ratio also moves with how much the disk gains from writers
//     in parallel (on this 2-core VM, how much CPU each I/O costs);
//   - the protocol's floor (protocolFloor): the same file work, eleven
//     fsyncs a task, by writers of the daemon's shape and nothing else,
//     in the same round (first in every other one, so that neither always
//     meets the disk warmer). Its ratio is the part of the disk's limit
//     the daemon reaches.
//
// Each figure is the median burst; every burst is listed.
func throughput(ctx context.Context, dir string, n int, rawDir string) ([]coreFigure, error) {
	var finished atomic.Int64
	progress := make(chan struct{}, 1) // a task ended: look at finished again
	d, store, err := coreDaemon(ctx, dir, &instant{}, func(*taskfile.Task) {
		finished.Add(1)
		select {
		case progress <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return nil, err
	}
	defer stopDaemon(d)
	in := store.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	logs := store.Layout.Lane(taskfile.KindAPI, taskfile.DirLogs)
	createsBefore, err := createCost(logs, "before")
	if err != nil {
		return nil, err
	}
	per := max(n/throughputRounds, 1)
	burst := func(r int) (float64, error) {
		// The drops' bytes are made before the clock starts, as the
		// floor's are: a dropper is another program, and encoding its
		// YAML is not the daemon's work (writing it durably is, and counts).
		ids, drops := make([]string, per), make([][]byte, per)
		for i := range per {
			ids[i] = fmt.Sprintf("tp-%d-%06d", r, i)
			drops[i] = taskData(ids[i])
		}
		start := time.Now()
		for i, id := range ids {
			if _, err := store.Submit(in, id, drops[i]); err != nil {
				return 0, err
			}
		}
		want := int64((r + 1) * per)
		deadline := time.After(5 * time.Minute)
		for finished.Load() < want {
			select {
			case <-deadline:
				return 0, fmt.Errorf("throughput: %d of %d finished in 5 minutes", finished.Load(), want)
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-progress:
			}
		}
		return float64(per) / time.Since(start).Seconds(), nil
	}
	before, err := rawWrites(filepath.Join(rawDir, "0"), 100)
	if err != nil {
		return nil, err
	}
	type round struct{ rate, base, floor float64 }
	var rounds []round
	for r := range throughputRounds {
		var x round
		floor := func() (err error) {
			x.floor, err = protocolFloor(filepath.Join(rawDir, "floor-"+strconv.Itoa(r)), per, taskData("floor-000000"))
			return err
		}
		if r%2 == 1 {
			if err := floor(); err != nil {
				return nil, err
			}
		}
		if x.rate, err = burst(r); err != nil {
			return nil, err
		}
		if r%2 == 0 {
			if err := floor(); err != nil {
				return nil, err
			}
		}
		after, err := rawWrites(filepath.Join(rawDir, strconv.Itoa(r+1)), 100)
		if err != nil {
			return nil, err
		}
		x.base = (before + after) / 2
		rounds = append(rounds, x)
		before = after
	}
	// median sorts the rounds by ratio and lists every burst's.
	median := func(ratio func(round) float64) (round, string) {
		sorted := slices.Clone(rounds)
		slices.SortFunc(sorted, func(a, b round) int { return cmp.Compare(ratio(a), ratio(b)) })
		var each []string
		for _, x := range sorted {
			each = append(each, fmt.Sprintf("%.2f", ratio(x)))
		}
		return sorted[len(sorted)/2], strings.Join(each, " ")
	}
	createsAfter, err := createCost(logs, "after")
	if err != nil {
		return nil, err
	}
	on := ""
	if fs := fsInfo(dir); fs != "" {
		on = ", on " + fs
	}
	on += fmt.Sprintf("; a file create in the spool's logs/ cost %.0f µs before the bursts and %.0f µs after", createsBefore, createsAfter)
	med, each := median(func(x round) float64 { return x.rate / x.base })
	fmed, feach := median(func(x round) float64 { return x.rate / x.floor })
	return []coreFigure{
		{Name: "throughput", Value: med.rate, Unit: "tasks/s", Baseline: med.base, BaseUnit: "writes/s", Ratio: med.rate / med.base,
			Note: fmt.Sprintf("%d tasks in %d bursts, instant API executor, api.concurrency 5, drops included: %.2f × the three durable writes a task needs (intake, mark, finish; target 0.9 or more); the median burst, bursts %s × one write; baseline: durable atomic writes/s of one task file in the same folder tree, the mean of the rates just before and just after the burst%s",
				per*throughputRounds, throughputRounds, 3*med.rate/med.base, each, on)},
		{Name: "throughput, floor", Value: fmed.rate, Unit: "tasks/s", Baseline: fmed.floor, BaseUnit: "tasks/s", Ratio: fmed.rate / fmed.floor,
			Note: fmt.Sprintf("the same bursts against the protocol's floor in the same round: the same eleven fsyncs a task by one dropper, one intake and %d claimers doing nothing else (no decoding, index, watcher or log); the median burst, bursts %s × the floor", floorWorkers, feach)},
	}, nil
}

func writeCore(w io.Writer, fs []coreFigure) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "spool core (real time, not scaled)")
	for _, f := range fs {
		bu := f.BaseUnit
		if bu == "" {
			bu = f.Unit
		}
		fmt.Fprintf(w, "  %-19s %8.1f %-7s baseline %8.1f %-8s ratio %5.2f  %s\n", f.Name, f.Value, f.Unit, f.Baseline, bu, f.Ratio, f.Note)
	}
}
