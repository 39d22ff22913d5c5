package bench

import (
	"cmp"
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/lanes/apimodel"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/fsnotify/fsnotify.(*inotify).readEvents"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

func TestWorkload_FieldReport(t *testing.T) {
	a, b := FieldReport(DefaultSeed), FieldReport(DefaultSeed)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different workloads")
	}
	if slices.Equal(a, FieldReport(DefaultSeed+1)) {
		t.Fatal("another seed gave the same workload")
	}
	if Count(a, taskfile.KindWeb) != 12 || Count(a, taskfile.KindAPI) != 28 {
		t.Fatalf("counts web %d api %d, want 12 and 28", Count(a, taskfile.KindWeb), Count(a, taskfile.KindAPI))
	}
	for _, k := range a {
		lo, hi := APIMin, APIMax
		if k.Kind == taskfile.KindWeb {
			lo, hi = WebMin, WebMax
		}
		if k.Dur < lo || k.Dur > hi {
			t.Errorf("%s: %s outside %s..%s", k.ID, k.Dur, lo, hi)
		}
	}
	if !slices.Equal(Order(a, OrderMixed), a) {
		t.Error("the mixed order is not the drawn order")
	}
	wf := Order(a, OrderWebFirst)
	for i, k := range wf {
		if want := i < FieldWeb; (k.Kind == taskfile.KindWeb) != want {
			t.Fatalf("web first: task %d is %s", i, k.Kind)
		}
	}
}

func TestLowerBound(t *testing.T) {
	const s = time.Second
	tasks := []Task{
		{ID: "w1", Kind: taskfile.KindWeb, Dur: 100 * s},
		{ID: "w2", Kind: taskfile.KindWeb, Dur: 60 * s},
		{ID: "a1", Kind: taskfile.KindAPI, Dur: 30 * s},
		{ID: "a2", Kind: taskfile.KindAPI, Dur: 30 * s},
		{ID: "a3", Kind: taskfile.KindAPI, Dur: 30 * s},
	}
	apiOnly := tasks[2:]
	for _, c := range []struct {
		name    string
		tasks   []Task
		l       Limits
		want    time.Duration
		formula string
	}{
		{"one session bounds", tasks, Limits{Sessions: 1, API: 3}, 160 * s, "max(Σweb/1, Σapi/3, longest task)"},
		{"two sessions: the longest web task bounds", tasks, Limits{Sessions: 2, API: 3}, 100 * s, "max(Σweb/2, Σapi/3, longest task)"},
		{"shared pool of 1", tasks, Limits{Sessions: 1, API: 1, Workers: 1}, 250 * s, "max(Σweb/1, Σapi/1, Σall/1, longest task)"},
		{"API only, 1 at once", apiOnly, Limits{Sessions: 1, API: 1}, 90 * s, "max(Σapi/1, longest task)"},
		{"API only, 3 at once: the longest task bounds", apiOnly, Limits{Sessions: 1, API: 3}, 30 * s, "max(Σapi/3, longest task)"},
		{"API only, 2 at once", apiOnly, Limits{Sessions: 1, API: 2}, 45 * s, "max(Σapi/2, longest task)"},
	} {
		if got := LowerBound(c.tasks, c.l); got != c.want {
			t.Errorf("%s: LowerBound = %s, want %s", c.name, got, c.want)
		}
		if got := c.l.Formula(c.tasks); got != c.formula {
			t.Errorf("%s: Formula = %q, want %q", c.name, got, c.formula)
		}
	}
}

func TestPool_Limits(t *testing.T) {
	for _, c := range []struct {
		p    Pool
		want Limits
		name string
	}{
		{Pool{Workers: 8, Quota: 5}, Limits{Sessions: 1, API: 5, Workers: 8}, "pool 8, no gate"},
		{Pool{Workers: 2, Quota: 5}, Limits{Sessions: 1, API: 2, Workers: 2}, "pool 2, no gate"},
		{Pool{Workers: 8, WebSlots: 1, Quota: 5}, Limits{Sessions: 1, API: 5, Workers: 8}, "pool 8 + web semaphore 1"},
		{Pool{Workers: 8, WebSlots: 1, APISlots: 3, Quota: 5}, Limits{Sessions: 1, API: 3, Workers: 8}, "pool 8 + two semaphores (web 1, API 3)"},
		{Pool{Workers: 16, WebSlots: 1, APISlots: 9, Quota: 5}, Limits{Sessions: 1, API: 5, Workers: 16}, "pool 16 + two semaphores (web 1, API 9)"},
	} {
		if got := c.p.Limits(); got != c.want {
			t.Errorf("%s: Limits = %+v, want %+v", c.name, got, c.want)
		}
		if got := c.p.Name(); got != c.name {
			t.Errorf("Name = %q, want %q", got, c.name)
		}
	}
}

func TestSpreadOf(t *testing.T) {
	for _, c := range []struct {
		xs   []int
		want Spread[int]
	}{
		{nil, Spread[int]{}},
		{[]int{7}, Spread[int]{7, 7, 7}},
		{[]int{9, 1, 4}, Spread[int]{4, 1, 9}},
		{[]int{9, 1, 4, 2}, Spread[int]{3, 1, 9}},
	} {
		if got := SpreadOf(c.xs); got != c.want {
			t.Errorf("SpreadOf(%v) = %+v, want %+v", c.xs, got, c.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 3}, {95, 5}, {100, 5}, {1, 1}} {
		if got := Percentile(ds, c.p); got != c.want {
			t.Errorf("Percentile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if Mean(ds) != 3 || Percentile(nil, 50) != 0 || Mean(nil) != 0 {
		t.Error("Mean or empty input wrong")
	}
}

// rig is a small workload's stand-ins and executors.
type rig struct {
	cfg  *config.Config
	exec map[taskfile.Kind]attempt.Executor
	chat *chatstand.Server
	api  *apistand.Server
}

const scale = 0.002 // a 6-minute answer takes 0.74 s

func newRig(t *testing.T, apiConc int) *rig {
	t.Helper()
	api, err := apistand.Start(apistand.Options{Quota: 5, Scale: scale})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = api.Close() })
	chat, err := chatstand.Start(chatstand.Options{Scale: scale})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = chat.Close() })
	cfg, err := Config(t.TempDir(), api.URL(), chat.URL(), apiConc, 2, 30*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ax, err := apimodel.New(cfg, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ax.Close)
	return &rig{cfg: cfg, chat: chat, api: api, exec: map[taskfile.Kind]attempt.Executor{taskfile.KindAPI: ax, taskfile.KindWeb: &ChatHTTP{URL: chat.URL()}}}
}

func TestPool_Run(t *testing.T) {
	tasks := Workload(3, 4, 6)
	for _, c := range []struct {
		webSlots, apiSlots int
		collisions         bool
	}{{collisions: true}, {webSlots: 1}, {webSlots: 1, apiSlots: 2}} {
		r := newRig(t, 3)
		p := &Pool{Workers: 8, WebSlots: c.webSlots, APISlots: c.apiSlots, MaxRetries: 2, Backoff: 30 * time.Millisecond, Scale: scale,
			Exec: r.exec, Models: Models(r.cfg), Quota: 5}
		res := p.Run(context.Background(), tasks)
		name := p.Name()
		if res.Lost != 0 {
			t.Errorf("%s: %d tasks lost", name, res.Lost)
		}
		if got := res.WebCollisions > 0; got != c.collisions {
			t.Errorf("%s: %d collisions (stand-in saw %d)", name, res.WebCollisions, r.chat.Collisions())
		}
		if res.WebCollisions != r.chat.Collisions() {
			t.Errorf("%s: counted %d collisions, the stand-in refused %d", name, res.WebCollisions, r.chat.Collisions())
		}
		if c.webSlots > 0 && (r.chat.MaxConcurrent() != 1 || res.MaxWebCalls != 1 || res.WebFailed != 0 || len(res.APIWaits) != 6) {
			t.Errorf("%s: max web %d (stand-in %d), web failed %d, api waits %d", name, res.MaxWebCalls, r.chat.MaxConcurrent(), res.WebFailed, len(res.APIWaits))
		}
		if want := cmp.Or(c.apiSlots, p.Workers); res.MaxAPICalls > want || res.MaxAPICalls < 2 {
			t.Errorf("%s: %d API calls at once, want 2..%d", name, res.MaxAPICalls, want)
		}
		if res.LowerBound != time.Duration(float64(LowerBound(tasks, p.Limits()))*scale) {
			t.Errorf("%s: lower bound %s is not its limits' %+v", name, res.LowerBound, p.Limits())
		}
	}
}

func TestLanes_Run(t *testing.T) {
	tasks := Workload(3, 4, 6)
	r := newRig(t, 3)
	l := &Lanes{Cfg: r.cfg, Exec: r.exec, Scale: scale, Quota: 5}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := l.Run(ctx, tasks)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost+res.WebFailed+res.APIFailed != 0 || res.WebCollisions != 0 || r.chat.Collisions() != 0 {
		t.Fatalf("lost %d, failed %d+%d, collisions %d", res.Lost, res.WebFailed, res.APIFailed, r.chat.Collisions())
	}
	if r.chat.MaxConcurrent() != 1 {
		t.Errorf("the session saw %d generations at once", r.chat.MaxConcurrent())
	}
	// No schedule beats the bound. How close the lanes come is a speed,
	// which make bench measures; what a test can hold is that each web
	// task follows the last on an event, not on the next rescan.
	if res.Makespan < res.LowerBound {
		t.Errorf("makespan %s below the lower bound %s", res.Makespan, res.LowerBound)
	}
	if len(res.WebGaps) != 3 || Percentile(res.WebGaps, 100) >= r.cfg.Rescan.D()/2 {
		t.Errorf("web model idle between calls: %v, want 3 gaps each under half the rescan %s", res.WebGaps, r.cfg.Rescan.D())
	}
	if len(res.APIWaits) != 6 || len(res.WebWaits) != 4 {
		t.Errorf("waits: api %d web %d", len(res.APIWaits), len(res.WebWaits))
	}
}

func TestHandOff(t *testing.T) {
	m := time.Minute
	tasks := []Task{{Kind: taskfile.KindWeb, Dur: 3 * m}, {Kind: taskfile.KindAPI, Dur: m}, {Kind: taskfile.KindWeb, Dur: m},
		{Kind: taskfile.KindWeb, Dur: m}, {Kind: taskfile.KindWeb, Dur: 2 * m}}
	tests := []struct {
		name string
		l    Limits
		want time.Duration
	}{
		// s1: 3; s2: 1, 1, 2 → 4 (the bound Σweb/2 is 3.5)
		{"two sessions, in queue order", Limits{Sessions: 2, API: 1}, 4 * m},
		{"one session", Limits{Sessions: 1, API: 1}, 7 * m},
		{"more sessions than tasks", Limits{Sessions: 8, API: 1}, 3 * m},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HandOff(tasks, tt.l); got != tt.want {
				t.Errorf("HandOff = %v, want %v", got, tt.want)
			}
		})
	}
	api := append(slices.Clone(tasks), Task{Kind: taskfile.KindAPI, Dur: 9 * m})
	if got := HandOff(api, Limits{Sessions: 2, API: 1}); got != 10*m {
		t.Errorf("with 10m of API work on one slot: HandOff = %v, want 10m", got)
	}
	// The figures for the bench's own seed, web-first order.
	ts := WebFirst(FieldReport(DefaultSeed))
	t.Logf("field report, web first: 2 sessions %v (%.3f× the bound), 3 sessions %v (%.3f×)",
		HandOff(ts, Limits{Sessions: 2, API: 3}), float64(HandOff(ts, Limits{Sessions: 2, API: 3}))/float64(LowerBound(ts, Limits{Sessions: 2, API: 3})),
		HandOff(ts, Limits{Sessions: 3, API: 3}), float64(HandOff(ts, Limits{Sessions: 3, API: 3}))/float64(LowerBound(ts, Limits{Sessions: 3, API: 3})))
}
