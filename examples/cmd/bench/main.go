// Command bench runs the field report's comparison in one program and one
// run: the same workload (12 web and 28 API tasks, fixed seed, durations
// from the field report's ranges, time-scaled) through every scheduling
// strategy it tried (one pool of 8, 16 and 2 with no gate, one pool of 8
// with a semaphore of one before web calls) and through spoolgate's two
// lanes, plus an API-only batch on the lanes. It prints one aligned table
// (or -json) with each strategy's makespan against the lower bound, API
// waits, and web collisions, all in field-report time (measured ÷ scale).
//
// The web model here is the chat stand-in's HTTP form (POST /api/generate,
// the same one-generation-per-session rule as its page), not a browser:
// the browser's own cost is what `make demo` shows. API calls go through
// spoolgate's real API executor (lanes/apimodel) to the OpenAI-compatible
// stand-in with a quota of 5 at once, as the vendor's.
//
//	go run ./examples/cmd/bench [-scale 0.01] [-seed 7] [-json]
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/apimodel"
	"github.com/spoolgate/spoolgate/spool"
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
	repeat     int
	coreFiles  int
	late       bool
	order      string
}

func main() {
	var o options
	flag.Float64Var(&o.scale, "scale", 0.01, "time scale of the stand-ins (0.01: a 6-minute answer takes 3.6 s)")
	flag.Uint64Var(&o.seed, "seed", bench.DefaultSeed, "seed of the workload's durations and order")
	flag.StringVar(&o.order, "order", "web-first", "submission order: web-first (the field report's queue) or mixed (shuffled by the seed)")
	flag.BoolVar(&o.late, "late-collisions", true, "a colliding web call fails only after its whole time, as in the field report (false: at once)")
	flag.IntVar(&o.quota, "quota", 5, "the API vendor's quota: requests answered at once (more get 429)")
	flag.IntVar(&o.apiConc, "api-concurrency", 3, "spoolgate's api.concurrency (the lower bound uses it)")
	flag.IntVar(&o.maxRetries, "max-retries", 2, "retries after the first attempt, for every strategy")
	flag.DurationVar(&o.backoff, "backoff", 30*time.Second, "first retry delay in field time (scaled), doubling")
	flag.StringVar(&o.dir, "dir", "", "folder for the temporary spools (default: the system's temp folder)")
	flag.BoolVar(&o.verbose, "v", false, "the lanes' log on stderr")
	flag.BoolVar(&o.asJSON, "json", false, "print JSON instead of the table")
	flag.StringVar(&o.only, "only", "", "comma-separated strategies to run: pool8,pool16,pool2,sem8,lanes,apionly,core")
	flag.IntVar(&o.repeat, "repeat", 3, "runs of each spoolgate strategy; the table shows the run with the median API mean wait")
	flag.BoolVar(&o.core, "core", true, "also measure the spool core (throughput, pickup latency, start-up)")
	flag.IntVar(&o.coreFiles, "core-files", 100000, "pending files for the start-up measurement")
	flag.Parse()
	if o.scale <= 0 || o.scale > 1 {
		fmt.Fprintln(os.Stderr, "bench: -scale must be in (0, 1]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// strategy is one row of the table.
type strategy struct {
	key string
	run func(ctx context.Context, env *stands) (bench.Result, error)
}

// stands are one strategy's fresh stand-ins and executors.
type stands struct {
	api  *apistand.Server
	chat *chatstand.Server
	cfg  *spool.Config
	exec map[spool.Kind]lanes.Executor
	dir  string
}

func (s *stands) close() {
	if c, ok := s.exec[spool.KindAPI].(interface{ Close() }); ok {
		c.Close()
	}
	_ = s.api.Close()
	_ = s.chat.Close()
	_ = os.RemoveAll(s.dir)
}

func newStands(o options) (*stands, error) {
	s := &stands{}
	var err error
	if s.api, err = apistand.Start(apistand.Options{Quota: o.quota, Scale: o.scale}); err != nil {
		return nil, err
	}
	if s.chat, err = chatstand.Start(chatstand.Options{Scale: o.scale, LateCollisions: o.late}); err != nil {
		_ = s.api.Close()
		return nil, err
	}
	if s.dir, err = os.MkdirTemp(o.dir, "spoolgate-bench-"); err != nil {
		s.close()
		return nil, err
	}
	backoff := time.Duration(float64(o.backoff) * o.scale)
	if s.cfg, err = bench.Config(s.dir, s.api.URL(), s.chat.URL(), o.apiConc, o.maxRetries, backoff); err != nil {
		s.close()
		return nil, err
	}
	api, err := apimodel.New(s.cfg, os.Getenv)
	if err != nil {
		s.close()
		return nil, err
	}
	s.exec = map[spool.Kind]lanes.Executor{
		spool.KindAPI: api,
		spool.KindWeb: &bench.ChatHTTP{URL: s.chat.URL()},
	}
	return s, nil
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	tasks := bench.FieldReport(o.seed)
	switch o.order {
	case "web-first":
		tasks = bench.WebFirst(tasks)
	case "mixed":
	default:
		fmt.Fprintf(os.Stderr, "bench: -order %q: want web-first or mixed\n", o.order)
		os.Exit(2)
	}
	var apiOnly []bench.Task
	for _, t := range tasks {
		if t.Kind == spool.KindAPI {
			apiOnly = append(apiOnly, t)
		}
	}
	log := slog.New(slog.DiscardHandler)
	if o.verbose {
		log = slog.New(slog.NewTextHandler(stderr, nil))
	}
	backoff := time.Duration(float64(o.backoff) * o.scale)
	pool := func(workers int, gate bool) func(context.Context, *stands) (bench.Result, error) {
		return func(ctx context.Context, s *stands) (bench.Result, error) {
			p := &bench.Pool{Workers: workers, WebGate: gate, MaxRetries: o.maxRetries, Backoff: backoff,
				Scale: o.scale, Exec: s.exec, Models: bench.Models(s.cfg), APIConcurrency: o.apiConc}
			return p.Run(ctx, tasks), ctx.Err()
		}
	}
	twoLanes := func(name string, ts []bench.Task, kinds ...spool.Kind) func(context.Context, *stands) (bench.Result, error) {
		return func(ctx context.Context, s *stands) (bench.Result, error) {
			ex := map[spool.Kind]lanes.Executor{}
			for _, k := range kinds {
				ex[k] = s.exec[k]
			}
			l := &bench.Lanes{Cfg: s.cfg, Exec: ex, Scale: o.scale, Name: name, Log: log}
			return l.Run(ctx, ts)
		}
	}
	all := []strategy{
		{"pool8", pool(8, false)},
		{"pool16", pool(16, false)},
		{"pool2", pool(2, false)},
		{"sem8", pool(8, true)},
		{"lanes", twoLanes("spoolgate two lanes", tasks, spool.KindWeb, spool.KindAPI)},
		{"apionly", twoLanes("spoolgate, API-only batch", apiOnly, spool.KindAPI)},
	}
	want := map[string]bool{}
	for _, k := range strings.Split(o.only, ",") {
		if k = strings.TrimSpace(k); k != "" {
			want[k] = true
		}
	}
	var results []bench.Result
	for _, st := range all {
		if len(want) > 0 && !want[st.key] {
			continue
		}
		runs := 1
		if st.key == "lanes" || st.key == "apionly" {
			runs = max(o.repeat, 1)
		}
		var rs []bench.Result
		for i := range runs {
			fmt.Fprintf(stderr, "bench: running %s (%d/%d) ...\n", st.key, i+1, runs)
			s, err := newStands(o)
			if err != nil {
				return err
			}
			r, err := st.run(ctx, s)
			r.Note += fmt.Sprintf("; stand-ins saw at most %d web and %d API calls at once", s.chat.MaxConcurrent(), s.api.MaxConcurrent())
			s.close()
			if err != nil {
				return fmt.Errorf("%s: %w", st.key, err)
			}
			rs = append(rs, r)
		}
		slices.SortFunc(rs, func(a, b bench.Result) int { return cmp.Compare(bench.Mean(a.APIWaits), bench.Mean(b.APIWaits)) })
		r := rs[len(rs)/2]
		if runs > 1 {
			var means []string
			for _, x := range rs {
				means = append(means, field(bench.Mean(x.APIWaits), o.scale))
			}
			r.Note += fmt.Sprintf("; median of %d runs by API mean wait (%s)", runs, strings.Join(means, ", "))
		}
		results = append(results, r)
	}
	var core []coreFigure
	if o.core && (len(want) == 0 || want["core"]) {
		fmt.Fprintln(stderr, "bench: measuring the spool core ...")
		var err error
		if core, err = measureCore(ctx, o, stderr); err != nil {
			return fmt.Errorf("core: %w", err)
		}
	}
	if o.asJSON {
		return writeJSON(stdout, o, tasks, results, core)
	}
	if len(results) > 0 {
		writeTable(stdout, o, tasks, results)
	}
	writeCore(stdout, core)
	return nil
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

func find(rs []bench.Result, name string) (bench.Result, bool) {
	for _, r := range rs {
		if r.Strategy == name {
			return r, true
		}
	}
	return bench.Result{}, false
}

func writeTable(w io.Writer, o options, tasks []bench.Task, rs []bench.Result) {
	sw, sa := bench.Sum(tasks, spool.KindWeb), bench.Sum(tasks, spool.KindAPI)
	lb := bench.LowerBound(tasks, o.apiConc)
	fmt.Fprintf(w, "workload: %d web (Σ %s) + %d API (Σ %s), seed %d; lower bound max(Σweb, Σapi/%d) = %s\n",
		bench.Count(tasks, spool.KindWeb), sw, bench.Count(tasks, spool.KindAPI), sa, o.seed, o.apiConc, lb)
	fmt.Fprintf(w, "time scale %g: every time below is field-report time (measured ÷ %g); API quota %d at once; up to %d retries, backoff %s doubling\n",
		o.scale, o.scale, o.quota, o.maxRetries, o.backoff)
	fmt.Fprintln(w, "web calls go to the chat stand-in's HTTP form (POST /api/generate, one generation per session), not a browser; API calls through lanes/apimodel")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "strategy\tmakespan\t× bound\tAPI wait mean\tAPI wait p95\tweb collisions\tweb failed\tretries\t429s\tlost\t")
	for _, r := range rs {
		star := ""
		if r.WebFailed+r.APIFailed+r.Lost > 0 {
			star = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f%s\t%s\t%s\t%d/%d (%.0f%%)\t%d/%d\t%d\t%d\t%d\t\n",
			r.Strategy, field(r.Makespan, o.scale), r.Ratio(), star, field(bench.Mean(r.APIWaits), o.scale),
			field(bench.Percentile(r.APIWaits, 95), o.scale), r.WebCollisions, r.WebAttempts, 100*r.WebFailureRate(),
			r.WebFailed, bench.Count(tasks, spool.KindWeb)*btoi(r.WebAttempts > 0), r.Retries, r.Throttled, r.Lost)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "web collisions: attempts the session refused (another generation was running) / web attempts; web failed: web tasks failed after all retries")
	fmt.Fprintln(w, "* tasks failed: the makespan is short because their work was never done")
	if r, ok := find(rs, "spoolgate two lanes"); ok && len(r.WebGaps) > 0 {
		fmt.Fprintf(w, "two lanes, per-task cost (real time): web model idle between calls %.1f ms mean, %.1f ms max over %d hand-overs; first web call %.1f ms after the first drop\n",
			ms(bench.Mean(r.WebGaps)), ms(bench.Percentile(r.WebGaps, 100)), len(r.WebGaps), ms(r.FirstWebStart))
	}
	for _, name := range []string{"spoolgate two lanes", "spoolgate, API-only batch"} {
		if r, ok := find(rs, name); ok && len(r.APIGaps) > 0 {
			fmt.Fprintf(w, "%s, per-task cost (real time): an API slot idle between calls %.1f ms mean, %.1f ms p95 (%s field time each at this scale)\n",
				name, ms(bench.Mean(r.APIGaps)), ms(bench.Percentile(r.APIGaps, 95)), field(bench.Mean(r.APIGaps), r.Scale))
		}
	}
	for _, r := range rs {
		fmt.Fprintf(w, "  %-26s %s\n", r.Strategy, r.Note)
	}
	checks(w, rs)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checks prints the targets against the figures.
func checks(w io.Writer, rs []bench.Result) {
	mark := func(ok bool) string {
		if ok {
			return "MET "
		}
		return "MISS"
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "targets")
	lanesR, okL := find(rs, "spoolgate two lanes")
	apiR, okA := find(rs, "spoolgate, API-only batch")
	if okL {
		fmt.Fprintf(w, "  %s two lanes within 5%% of the lower bound: %.3f×\n", mark(lanesR.Ratio() <= 1.05), lanesR.Ratio())
		fmt.Fprintf(w, "  %s two lanes: zero web collisions: %d, zero failed or lost: %d\n",
			mark(lanesR.WebCollisions == 0), lanesR.WebCollisions, lanesR.WebFailed+lanesR.APIFailed+lanesR.Lost)
	}
	if okL && okA {
		m, a := bench.Mean(lanesR.APIWaits), bench.Mean(apiR.APIWaits)
		d := 0.0
		if a > 0 {
			d = float64(m-a) / float64(a)
		}
		fmt.Fprintf(w, "  %s API mean wait, mixed vs API-only, within 10%%: %s vs %s (%+.1f%%)\n",
			mark(d <= 0.10), field(m, lanesR.Scale), field(a, apiR.Scale), 100*d)
	}
	if okL {
		for _, name := range []string{"pool 8, no gate", "pool 8 + web semaphore 1"} {
			if r, ok := find(rs, name); ok && bench.Mean(lanesR.APIWaits) > 0 {
				x := float64(bench.Mean(r.APIWaits)) / float64(bench.Mean(lanesR.APIWaits))
				why := ""
				if x < 3 && r.WebFailed > 0 {
					why = fmt.Sprintf(" (its web calls collide and fail at once, freeing their workers: %d of its web tasks failed)", r.WebFailed)
				}
				fmt.Fprintf(w, "  %s %s inflates the API mean wait many times over: %.1f× the two lanes'%s\n", mark(x >= 3), name, x, why)
			}
		}
	}
	for _, name := range []string{"pool 8, no gate", "pool 16, no gate", "pool 2, no gate"} {
		if r, ok := find(rs, name); ok {
			fmt.Fprintf(w, "  %s %s produces web collisions: %d\n", mark(r.WebCollisions > 0), name, r.WebCollisions)
		}
	}
}

type jsonRow struct {
	Strategy             string  `json:"strategy"`
	Note                 string  `json:"note"`
	MakespanSeconds      float64 `json:"makespanSeconds"`
	LowerBoundSeconds    float64 `json:"lowerBoundSeconds"`
	Ratio                float64 `json:"ratio"`
	APIWaitMeanSeconds   float64 `json:"apiWaitMeanSeconds"`
	APIWaitP95Seconds    float64 `json:"apiWaitP95Seconds"`
	WebWaitMeanSeconds   float64 `json:"webWaitMeanSeconds"`
	WebGapMeanMs         float64 `json:"webGapMeanMs"`
	WebAttempts          int     `json:"webAttempts"`
	WebCollisions        int     `json:"webCollisions"`
	WebFailureRate       float64 `json:"webFailureRate"`
	WebFailed            int     `json:"webFailed"`
	APIFailed            int     `json:"apiFailed"`
	Retries              int     `json:"retries"`
	Throttled            int     `json:"throttled"`
	Lost                 int     `json:"lost"`
	MeasuredMakespanSecs float64 `json:"measuredMakespanSeconds"`
}

func writeJSON(w io.Writer, o options, tasks []bench.Task, rs []bench.Result, core []coreFigure) error {
	fs := func(d time.Duration) float64 { return bench.Unscale(d, o.scale).Seconds() }
	out := struct {
		Scale      float64      `json:"scale"`
		Seed       uint64       `json:"seed"`
		Web        int          `json:"web"`
		API        int          `json:"api"`
		SumWeb     float64      `json:"sumWebSeconds"`
		SumAPI     float64      `json:"sumApiSeconds"`
		APIConc    int          `json:"apiConcurrency"`
		Quota      int          `json:"quota"`
		WebStandIn string       `json:"webStandIn"`
		TimesAre   string       `json:"timesAre"`
		Strategies []jsonRow    `json:"strategies"`
		Core       []coreFigure `json:"core,omitempty"`
	}{Scale: o.scale, Seed: o.seed, Web: bench.Count(tasks, spool.KindWeb), API: bench.Count(tasks, spool.KindAPI),
		SumWeb: bench.Sum(tasks, spool.KindWeb).Seconds(), SumAPI: bench.Sum(tasks, spool.KindAPI).Seconds(),
		APIConc: o.apiConc, Quota: o.quota, WebStandIn: "chat stand-in HTTP form (POST /api/generate), not a browser",
		TimesAre: "field-report seconds (measured ÷ scale), except measuredMakespanSeconds", Core: core}
	for _, r := range rs {
		out.Strategies = append(out.Strategies, jsonRow{
			Strategy: r.Strategy, Note: r.Note, MakespanSeconds: fs(r.Makespan), LowerBoundSeconds: fs(r.LowerBound),
			Ratio: r.Ratio(), APIWaitMeanSeconds: fs(bench.Mean(r.APIWaits)), APIWaitP95Seconds: fs(bench.Percentile(r.APIWaits, 95)),
			WebWaitMeanSeconds: fs(bench.Mean(r.WebWaits)), WebGapMeanMs: ms(bench.Mean(r.WebGaps)), WebAttempts: r.WebAttempts, WebCollisions: r.WebCollisions,
			WebFailureRate: r.WebFailureRate(), WebFailed: r.WebFailed, APIFailed: r.APIFailed, Retries: r.Retries,
			Throttled: r.Throttled, Lost: r.Lost, MeasuredMakespanSecs: r.Makespan.Seconds(),
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
