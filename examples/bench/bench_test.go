package bench

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/apimodel"
	"github.com/spoolgate/spoolgate/spool"
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
	if Count(a, spool.KindWeb) != 12 || Count(a, spool.KindAPI) != 28 {
		t.Fatalf("counts web %d api %d, want 12 and 28", Count(a, spool.KindWeb), Count(a, spool.KindAPI))
	}
	for _, k := range a {
		lo, hi := APIMin, APIMax
		if k.Kind == spool.KindWeb {
			lo, hi = WebMin, WebMax
		}
		if k.Dur < lo || k.Dur > hi {
			t.Errorf("%s: %s outside %s..%s", k.ID, k.Dur, lo, hi)
		}
	}
	if got, want := LowerBound(a, 3), max(Sum(a, spool.KindWeb), Sum(a, spool.KindAPI)/3); got != want {
		t.Errorf("LowerBound = %s, want %s", got, want)
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
	cfg  *spool.Config
	exec map[spool.Kind]lanes.Executor
	chat *chatstand.Server
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
	return &rig{cfg: cfg, chat: chat, exec: map[spool.Kind]lanes.Executor{spool.KindAPI: ax, spool.KindWeb: &ChatHTTP{URL: chat.URL()}}}
}

func TestPool_Run(t *testing.T) {
	tasks := Workload(3, 4, 6)
	for _, c := range []struct {
		gate       bool
		collisions bool
	}{{gate: false, collisions: true}, {gate: true, collisions: false}} {
		r := newRig(t, 3)
		p := &Pool{Workers: 8, WebGate: c.gate, MaxRetries: 2, Backoff: 30 * time.Millisecond, Scale: scale,
			Exec: r.exec, Models: Models(r.cfg), APIConcurrency: 3}
		res := p.Run(context.Background(), tasks)
		if res.Lost != 0 {
			t.Errorf("gate %v: %d tasks lost", c.gate, res.Lost)
		}
		if got := res.WebCollisions > 0; got != c.collisions {
			t.Errorf("gate %v: %d collisions (stand-in saw %d)", c.gate, res.WebCollisions, r.chat.Collisions())
		}
		if res.WebCollisions != r.chat.Collisions() {
			t.Errorf("gate %v: counted %d collisions, the stand-in refused %d", c.gate, res.WebCollisions, r.chat.Collisions())
		}
		if c.gate && (r.chat.MaxConcurrent() != 1 || res.WebFailed != 0 || len(res.APIWaits) != 6) {
			t.Errorf("gated pool: max web %d, web failed %d, api waits %d", r.chat.MaxConcurrent(), res.WebFailed, len(res.APIWaits))
		}
	}
}

func TestLanes_Run(t *testing.T) {
	tasks := Workload(3, 4, 6)
	r := newRig(t, 3)
	l := &Lanes{Cfg: r.cfg, Exec: r.exec, Scale: scale}
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
	// The web chain is the bound; the lanes may add their per-task file
	// work on top, but not a whole task's worth.
	if res.Makespan < res.LowerBound || res.Ratio() > 1.3 {
		t.Errorf("makespan %s against lower bound %s (ratio %.2f)", res.Makespan, res.LowerBound, res.Ratio())
	}
	if len(res.APIWaits) != 6 || len(res.WebWaits) != 4 {
		t.Errorf("waits: api %d web %d", len(res.APIWaits), len(res.WebWaits))
	}
}
