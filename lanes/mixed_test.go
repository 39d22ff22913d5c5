package lanes_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
)

// The field report's lesson: with two lanes, long web tasks do not make API
// tasks wait. A batch shaped like the report's (12 long web tasks, 28 short
// API tasks, time-scaled) gives its API tasks the same mean wait as an
// API-only batch, within 10%.
func TestDaemon_MixedBatchAPIWait(t *testing.T) {
	const apiTasks, webTasks = 28, 12
	run := func(withWeb bool) time.Duration {
		cfg := testConfig(t, "")
		r := start(t, cfg)
		// Pause both lanes while dropping, so every task is pending before
		// the first starts: the same start line for both runs.
		for _, k := range spool.Kinds {
			if err := spool.WriteFileAtomic(r.store.Layout.Paused(k), nil); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < apiTasks; i++ {
			drop(t, cfg, spool.KindAPI, fmt.Sprintf("a%02d", i), "fast", "[[duration=300ms]]")
			if withWeb && i < webTasks {
				drop(t, cfg, spool.KindWeb, fmt.Sprintf("w%02d", i), "chat", "[[duration=800ms]]")
			}
		}
		want := apiTasks
		if withWeb {
			want += webTasks
		}
		r.sig.wait(t, 10*time.Second, "all pending", func() bool { return len(r.sig.accepted) == want })
		for _, k := range spool.Kinds {
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
			dir, task := waitFinal(t, r, spool.KindAPI, fmt.Sprintf("a%02d", i), 30*time.Second)
			if dir != spool.DirDone {
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
		if withWeb && r.web.Max() != 1 {
			t.Fatalf("web lane ran %d at once", r.web.Max())
		}
		r.d.Stop()
		return sum / apiTasks
	}
	alone := run(false)
	mixed := run(true)
	ratio := float64(mixed) / float64(alone)
	t.Logf("API mean wait: alone %s, mixed with 12 web tasks %s (ratio %.3f)", alone, mixed, ratio)
	if ratio > 1.10 || ratio < 0.90 {
		t.Fatalf("mixed API mean wait %s differs from API-only %s by more than 10%%", mixed, alone)
	}
}
