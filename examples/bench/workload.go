// Package bench holds what `make demo` and `make bench` share: the field
// report's workload (12 web and 28 API tasks with durations drawn from its
// observed ranges), the lower bound of a batch's makespan, the scheduling
// strategies the field report compared, and the figures each one produces.
//
// Durations are field-report time; the stand-ins multiply them by their
// Scale, so a task's content always carries its unscaled duration in a
// `[[duration=...]]` directive, and every figure measured against a scaled
// stand-in is divided by the same scale to read in field-report time.
package bench

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/spoolgate/spoolgate/spool"
)

// The field report's batch and observed duration ranges.
const (
	FieldWeb    = 12
	FieldAPI    = 28
	WebMin      = 31 * time.Second
	WebMax      = 6*time.Minute + 10*time.Second
	APIMin      = 8 * time.Second
	APIMax      = 20 * time.Second
	DefaultSeed = 7
)

// Task is one task of a workload.
type Task struct {
	ID   string
	Kind spool.Kind
	// Dur is how long the model takes to answer, in field-report time.
	Dur time.Duration
}

// Content is the task's user content: a line of text and the duration
// directive the stand-ins obey (unscaled: they apply their own Scale).
func (t Task) Content() string {
	return fmt.Sprintf("Write launch copy %s. [[duration=%s]]", t.ID, t.Dur)
}

// Workload draws nWeb web and nAPI API tasks with durations uniform in
// whole seconds over the field report's ranges, in a submission order
// shuffled with the same seed: the batch arrives mixed, as operators drop it.
func Workload(seed uint64, nWeb, nAPI int) []Task {
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	draw := func(lo, hi time.Duration) time.Duration {
		n := int64((hi - lo) / time.Second)
		return lo + time.Duration(r.Int64N(n+1))*time.Second
	}
	var out []Task
	for i := 1; i <= nWeb; i++ {
		out = append(out, Task{ID: fmt.Sprintf("web-%02d", i), Kind: spool.KindWeb, Dur: draw(WebMin, WebMax)})
	}
	for i := 1; i <= nAPI; i++ {
		out = append(out, Task{ID: fmt.Sprintf("api-%02d", i), Kind: spool.KindAPI, Dur: draw(APIMin, APIMax)})
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// FieldReport is the field report's batch: 12 web and 28 API tasks.
func FieldReport(seed uint64) []Task { return Workload(seed, FieldWeb, FieldAPI) }

// Sum is the total duration of the tasks of kind k.
func Sum(tasks []Task, k spool.Kind) time.Duration {
	var s time.Duration
	for _, t := range tasks {
		if t.Kind == k {
			s += t.Dur
		}
	}
	return s
}

// Count is how many tasks are of kind k.
func Count(tasks []Task, k spool.Kind) int {
	n := 0
	for _, t := range tasks {
		if t.Kind == k {
			n++
		}
	}
	return n
}

// LowerBound is the least makespan any scheduler can reach, in field time:
// web tasks run one at a time, API tasks at most apiConcurrency at once, so
// max(Σweb, Σapi/apiConcurrency).
func LowerBound(tasks []Task, apiConcurrency int) time.Duration {
	return max(Sum(tasks, spool.KindWeb), Sum(tasks, spool.KindAPI)/time.Duration(apiConcurrency))
}

// WebFirst returns the tasks with every web task ahead of every API task,
// each kind in its drawn order: the field report's queue, whose logs show
// "many web tasks queued ahead of the API tasks, holding workers".
func WebFirst(tasks []Task) []Task {
	out := make([]Task, 0, len(tasks))
	for _, k := range []spool.Kind{spool.KindWeb, spool.KindAPI} {
		for _, t := range tasks {
			if t.Kind == k {
				out = append(out, t)
			}
		}
	}
	return out
}
