package lanes_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The field report's lesson: with two lanes, long web tasks do not make API
// tasks wait. A batch shaped like the report's (12 long web tasks, 28 short
// API tasks, time-scaled): the API lane runs at its full concurrency beside
// the web lane, and the whole API batch is through while most web tasks
// still wait, so no API task waited behind them. (The mean waits of the
// two runs are logged; their ratio is a figure of make bench, not a timed
// assertion that load could break.)
func TestDaemon_MixedBatchAPIWait(t *testing.T) {
	const apiTasks, webTasks = 28, 12
	run := func(withWeb bool) time.Duration {
		cfg := testConfig(t, "")
		r := start(t, cfg)
		// Pause both lanes while dropping, so every task is pending before
		// the first starts: the same start line for both runs.
		for _, k := range taskfile.Kinds {
			if err := r.store.WriteFileAtomic(r.store.Layout.Paused(k), nil); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < apiTasks; i++ {
			drop(t, cfg, taskfile.KindAPI, fmt.Sprintf("a%02d", i), "fast", "[[duration=300ms]]")
			if withWeb && i < webTasks {
				drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("w%02d", i), "chat", "[[duration=800ms]]")
			}
		}
		want := apiTasks
		if withWeb {
			want += webTasks
		}
		r.sig.wait(t, 10*time.Second, "all pending", func() bool { return len(r.sig.accepted) == want })
		for _, k := range taskfile.Kinds {
			if err := removeFile(r.store.Layout.Paused(k)); err != nil {
				t.Fatal(err)
			}
		}
		// Waits count from the lane's first start, so the moment the lane
		// notices the resume (its once-a-second look at the pause file)
		// does not enter the comparison.
		starts := make([]time.Time, apiTasks)
		first := time.Time{}
		for i := 0; i < apiTasks; i++ {
			dir, task := waitFinal(t, r, taskfile.KindAPI, fmt.Sprintf("a%02d", i), 30*time.Second)
			if dir != taskfile.DirDone {
				t.Fatalf("a%02d: %s", i, dir)
			}
			starts[i] = task.StartedAt
			if first.IsZero() || task.StartedAt.Before(first) {
				first = task.StartedAt
			}
		}
		var sum time.Duration
		for _, s := range starts {
			sum += s.Sub(first)
		}
		if withWeb {
			if r.web.Max() != 1 {
				t.Fatalf("web lane ran %d at once", r.web.Max())
			}
			// 12 web tasks of 800 ms one at a time take 9.6 s; 28 API tasks
			// of 300 ms three at a time take 2.8 s. Had API tasks queued
			// behind web ones, the web lane would be (nearly) through.
			r.sig.mu.Lock()
			n := r.sig.finals(taskfile.KindWeb)
			r.sig.mu.Unlock()
			if n > webTasks/2 {
				t.Fatalf("the API batch finished only after %d of %d web tasks: API tasks waited for the web lane", n, webTasks)
			}
		}
		if got, want := r.api.Max(), cfg.API.Concurrency; got != want {
			t.Fatalf("API lane ran at most %d at once, want its concurrency %d", got, want)
		}
		r.d.Stop()
		return sum / apiTasks
	}
	alone := run(false)
	mixed := run(true)
	ratio := float64(mixed) / float64(alone)
	t.Logf("API mean wait: alone %s, mixed with 12 web tasks %s (ratio %.3f)", alone, mixed, ratio)
}
