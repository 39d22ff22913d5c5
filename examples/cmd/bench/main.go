// Command bench runs the field report's comparison in one program and one
// run: the same workload (12 web and 28 API tasks, fixed seed, durations
// from the field report's ranges, time-scaled) through every scheduling
// strategy it tried (one pool of 8, 16 and 2 with no gate, one pool of 8
// with a semaphore of one before web calls), the best a careful user of a
// plain worker pool would build (one pool of 8 with two semaphores, web 1
// and API 3), and spoolgate's two lanes, plus an API-only batch on the
// lanes. Each strategy runs the same number of times in each queue order
// (web tasks first, as in the field report, and mixed), the runs
// interleaved so that a noisy minute on a shared machine falls on every
// strategy alike. It prints one aligned table (or -json): per order, each
// strategy's median and spread (min–max) of makespan, its ratio to the
// strategy's lower bound, API waits, web collisions and failures, all in
// field-report time (measured ÷ scale).
//
// The web model here is the chat stand-in's HTTP form (POST /api/generate,
// the same one-generation-per-session rule as its page), not a browser:
// the browser's own cost is what `make demo` shows. API calls go through
// spoolgate's real API executor (lanes/apimodel) to the OpenAI-compatible
// stand-in with a quota of 5 at once, as the vendor's.
//
//	go run ./examples/cmd/bench [-scale 0.006] [-repeat 3] [-orders web-first,mixed] [-json]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spoolgate/spoolgate/examples/bench"
)

type options struct {
	scale      float64
	seed       uint64
	quota      int
	apiConc    int
	maxRetries int
	backoff    time.Duration
	dir        string
	verbose    bool
	asJSON     bool
	only       string
	core       bool
	webAnswer  bool
	repeat     int
	coreFiles  int
	late       bool
	orders     []string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	var u usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, &u):
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// usageError is a flag the command cannot run with.
type usageError struct{ error }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	return runBench(ctx, o, stdout, stderr)
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Float64Var(&o.scale, "scale", 0.006, "time scale of the stand-ins (0.006: a 6-minute answer takes 2.2 s; the default keeps make bench within 15 minutes on 2 busy cores)")
	fs.Uint64Var(&o.seed, "seed", bench.DefaultSeed, "seed of the workload's durations and mixed order")
	orders := fs.String("orders", strings.Join(bench.Orders, ","), "queue orders, comma-separated: web-first (the field report's queue), mixed (shuffled by the seed)")
	fs.BoolVar(&o.late, "late-collisions", true, "a colliding web call fails only after its whole time, as in the field report (false: at once)")
	fs.IntVar(&o.quota, "quota", 5, "the API vendor's quota: requests answered at once (more get 429)")
	fs.IntVar(&o.apiConc, "api-concurrency", 3, "spoolgate's api.concurrency, and the API semaphore of the two-semaphore pool")
	fs.IntVar(&o.maxRetries, "max-retries", 2, "retries after the first attempt, for every strategy")
	fs.DurationVar(&o.backoff, "backoff", 30*time.Second, "first retry delay in field time (scaled), doubling")
	fs.StringVar(&o.dir, "dir", "", "folder for the temporary spools (default: the system's temp folder)")
	fs.BoolVar(&o.verbose, "v", false, "the lanes' log on stderr")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON instead of the table")
	fs.StringVar(&o.only, "only", "", "comma-separated strategies to run: "+strings.Join(strategyKeys(), ",")+",core,web-answer,web-warm,door")
	fs.IntVar(&o.repeat, "repeat", 3, "runs of every strategy in every order; the table shows each figure's median and min–max")
	fs.BoolVar(&o.core, "core", true, "also measure the spool core (throughput, pickup latency, start-up)")
	fs.BoolVar(&o.webAnswer, "web-answer", true, "also measure, through a real headless Chromium, the time from a web answer's stream end to its durable result, with a positive end signal and by quiet alone")
	fs.IntVar(&o.coreFiles, "core-files", 100000, "pending files for the start-up measurement")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, usageError{err}
	}
	if o.scale <= 0 || o.scale > 1 {
		return o, usageError{fmt.Errorf("-scale %g: want a value in (0, 1]", o.scale)}
	}
	if o.repeat < 1 {
		return o, usageError{fmt.Errorf("-repeat %d: want at least 1", o.repeat)}
	}
	if o.apiConc < 1 || o.quota < 1 {
		return o, usageError{errors.New("-api-concurrency and -quota must be at least 1")}
	}
	for _, k := range strings.Split(o.only, ",") {
		if k = strings.TrimSpace(k); k != "" && k != "core" && k != "web-answer" && k != "web-warm" && k != "door" && !slices.Contains(strategyKeys(), k) {
			return o, usageError{fmt.Errorf("-only: %q is not one of %s,core,web-answer,web-warm,door", k, strings.Join(strategyKeys(), ","))}
		}
	}
	for _, s := range strings.Split(*orders, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(bench.Orders, s) {
			return o, usageError{fmt.Errorf("-orders: %q is not one of %s", s, strings.Join(bench.Orders, ", "))}
		}
		if !slices.Contains(o.orders, s) {
			o.orders = append(o.orders, s)
		}
	}
	return o, nil
}

// cell is one strategy in one queue order: its runs.
type cell struct {
	st    strategy
	order string
	tasks []bench.Task
	runs  []bench.Result
}

func runBench(ctx context.Context, o options, stdout, stderr io.Writer) error {
	want := map[string]bool{}
	for _, k := range strings.Split(o.only, ",") {
		if k = strings.TrimSpace(k); k != "" {
			want[k] = true
		}
	}
	log := slog.New(slog.DiscardHandler)
	if o.verbose {
		log = slog.New(slog.NewTextHandler(stderr, nil))
	}
	var cells []*cell
	for _, st := range strategies(o, log) {
		if len(want) > 0 && !want[st.key] {
			continue
		}
		for _, order := range o.orders {
			cells = append(cells, &cell{st: st, order: order, tasks: st.tasks(bench.Order(bench.FieldReport(o.seed), order))})
		}
	}
	// The spool core's disk figures first, on a file system that no run
	// of the bench has deleted from yet (see measureDisk).
	start := time.Now()
	measureCore := o.core && (len(want) == 0 || want["core"])
	var coreRoot string
	var diskFigures []coreFigure
	if measureCore {
		var err error
		if coreRoot, err = os.MkdirTemp(o.dir, "spoolgate-core-"); err != nil {
			return err
		}
		defer func() {
			os.RemoveAll(coreRoot)
			markCleaned(filepath.Dir(coreRoot))
		}()
		fmt.Fprintf(stderr, "bench: %s: measuring the spool core against the disk ...\n", time.Since(start).Round(time.Second))
		if diskFigures, err = measureDisk(ctx, coreRoot, stderr); err != nil {
			return fmt.Errorf("core: %w", err)
		}
	}
	// Round-robin: run i of every cell before run i+1 of any, so that load
	// from the rest of the machine falls on every strategy alike.
	loadBefore := loadAverage()
	for i := range o.repeat {
		for _, c := range cells {
			fmt.Fprintf(stderr, "bench: %s: %s, %s (%d/%d) ...\n", time.Since(start).Round(time.Second), c.st.key, c.order, i+1, o.repeat)
			r, err := runOnce(ctx, o, c)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", c.st.key, c.order, err)
			}
			c.runs = append(c.runs, r)
		}
	}
	machine := fmt.Sprintf("%d CPUs; load average (1 min) %s before the strategies, %s after",
		runtime.NumCPU(), loadBefore, loadAverage())
	var core []coreFigure
	if measureCore {
		fmt.Fprintf(stderr, "bench: %s: measuring the spool core at scale ...\n", time.Since(start).Round(time.Second))
		fs, err := measureScale(ctx, o, coreRoot, stderr)
		if err != nil {
			return fmt.Errorf("core: %w", err)
		}
		core = append(diskFigures, fs...)
	}
	if o.webAnswer && (len(want) == 0 || want["web-answer"]) {
		fmt.Fprintf(stderr, "bench: %s: measuring the web answer's end ...\n", time.Since(start).Round(time.Second))
		fs, err := answerEndFigures(ctx, o, stderr)
		if err != nil {
			return fmt.Errorf("web answer end: %w", err)
		}
		core = append(core, fs...)
	}
	if o.webAnswer && (len(want) == 0 || want["web-warm"]) {
		fmt.Fprintf(stderr, "bench: %s: measuring the warm browser against a cold start ...\n", time.Since(start).Round(time.Second))
		fs, err := warmFigures(ctx, o, stderr)
		if err != nil {
			return fmt.Errorf("web warm: %w", err)
		}
		core = append(core, fs...)
	}
	if o.core && (len(want) == 0 || want["door"]) {
		fs, err := doorFigures(ctx, o, stderr)
		if err != nil {
			return fmt.Errorf("front door: %w", err)
		}
		core = append(core, fs...)
	}
	if o.asJSON {
		return writeJSON(stdout, o, cells, machine, core)
	}
	if len(cells) > 0 {
		writeTable(stdout, o, cells, machine)
	}
	writeCore(stdout, core)
	return nil
}

// runOnce runs c's strategy once on fresh stand-ins.
func runOnce(ctx context.Context, o options, c *cell) (bench.Result, error) {
	s, err := newStands(o)
	if err != nil {
		return bench.Result{}, err
	}
	defer s.close()
	r, err := c.st.run(ctx, s, c.tasks)
	r.MaxWebAtOnce, r.MaxAPIAtOnce = s.chat.MaxConcurrent(), s.api.MaxConcurrent()
	return r, err
}

// loadAverage is the system's 1-minute load average, or "unknown" where
// /proc/loadavg is not.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// field formats a measured duration in field-report time.
func field(d time.Duration, scale float64) string {
	f := bench.Unscale(d, scale)
	switch {
	case f >= time.Minute:
		return f.Round(time.Second).String()
	default:
		return f.Round(100 * time.Millisecond).String()
	}
}
