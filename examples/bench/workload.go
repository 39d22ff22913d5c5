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
	"github.com/spoolgate/spoolgate/spool/taskfile"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
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
	Kind taskfile.Kind
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
		out = append(out, Task{ID: fmt.Sprintf("web-%02d", i), Kind: taskfile.KindWeb, Dur: draw(WebMin, WebMax)})
	}
	for i := 1; i <= nAPI; i++ {
		out = append(out, Task{ID: fmt.Sprintf("api-%02d", i), Kind: taskfile.KindAPI, Dur: draw(APIMin, APIMax)})
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// FieldReport is the field report's batch: 12 web and 28 API tasks.
func FieldReport(seed uint64) []Task { return Workload(seed, FieldWeb, FieldAPI) }

// Sum is the total duration of the tasks of kind k.
func Sum(tasks []Task, k taskfile.Kind) time.Duration {
	var s time.Duration
	for _, t := range tasks {
		if t.Kind == k {
			s += t.Dur
		}
	}
	return s
}

// Count is how many tasks are of kind k.
func Count(tasks []Task, k taskfile.Kind) int {
	n := 0
	for _, t := range tasks {
		if t.Kind == k {
			n++
		}
	}
	return n
}

// Longest is the longest duration among tasks.
func Longest(tasks []Task) time.Duration {
	var m time.Duration
	for _, t := range tasks {
		m = max(m, t.Dur)
	}
	return m
}

// Limits are what caps a strategy's parallelism, its own choices and the
// vendors' together: they decide its lower bound.
type Limits struct {
	// Sessions is how many web calls can run at once: one per logged-in
	// session, whose page admits one generation at a time.
	Sessions int
	// API is how many API calls can be answered at once: the least of the
	// strategy's own API concurrency (its workers, semaphore or lane) and
	// the vendor's quota.
	API int
	// Workers is how many tasks of either kind can run at once when both
	// kinds share one pool; 0 when each kind has its own workers.
	Workers int
}

// LowerBound is the least makespan, in field time, that any scheduler
// within l can reach on tasks, however it orders them:
//
//	max(Σweb/Sessions, Σapi/API, Σall/Workers, longest task)
//
// each term counted only when it applies (a kind with tasks, a shared
// pool). Every term is a bound on its own: Sessions web calls at once
// cannot do Σweb of work in less than Σweb/Sessions, and so on; no task
// ends before its own duration.
func LowerBound(tasks []Task, l Limits) time.Duration {
	b := Longest(tasks)
	web, api := Sum(tasks, taskfile.KindWeb), Sum(tasks, taskfile.KindAPI)
	if web > 0 && l.Sessions > 0 {
		b = max(b, web/time.Duration(l.Sessions))
	}
	if api > 0 && l.API > 0 {
		b = max(b, api/time.Duration(l.API))
	}
	if l.Workers > 0 {
		b = max(b, (web+api)/time.Duration(l.Workers))
	}
	return b
}

// Formula is LowerBound's formula for l and tasks, with l's figures in it,
// e.g. "max(Σweb/1, Σapi/5, Σall/8, longest task)".
func (l Limits) Formula(tasks []Task) string {
	var terms []string
	if Count(tasks, taskfile.KindWeb) > 0 && l.Sessions > 0 {
		terms = append(terms, fmt.Sprintf("Σweb/%d", l.Sessions))
	}
	if Count(tasks, taskfile.KindAPI) > 0 && l.API > 0 {
		terms = append(terms, fmt.Sprintf("Σapi/%d", l.API))
	}
	if l.Workers > 0 {
		terms = append(terms, fmt.Sprintf("Σall/%d", l.Workers))
	}
	return "max(" + strings.Join(append(terms, "longest task"), ", ") + ")"
}

// WebFirst returns the tasks with every web task ahead of every API task,
// each kind in its drawn order: the field report's queue, whose logs show
// "many web tasks queued ahead of the API tasks, holding workers".
func WebFirst(tasks []Task) []Task {
	out := make([]Task, 0, len(tasks))
	for _, k := range []taskfile.Kind{taskfile.KindWeb, taskfile.KindAPI} {
		for _, t := range tasks {
			if t.Kind == k {
				out = append(out, t)
			}
		}
	}
	return out
}

// The queue orders of a batch: Order's names.
const (
	OrderWebFirst = "web-first"
	OrderMixed    = "mixed"
)

// Orders are the queue orders the bench compares, the field report's first.
var Orders = []string{OrderWebFirst, OrderMixed}

// Order returns tasks in the named queue order: OrderWebFirst (WebFirst)
// or OrderMixed (as drawn: shuffled by the workload's seed). It panics on
// another name.
func Order(tasks []Task, name string) []Task {
	switch name {
	case OrderWebFirst:
		return WebFirst(tasks)
	case OrderMixed:
		return slices.Clone(tasks)
	}
	panic("bench: unknown queue order " + name)
}

// HandOff is the makespan, in field time, of handing the web tasks in
// queue order to whichever of l.Sessions sessions frees first, each task
// taking its own duration and no time between tasks: what several
// sessions that hand over like one lane reach with these durations. The
// other terms of LowerBound (the API work, the longest task) still apply.
// It is computed offline, from the durations alone.
func HandOff(tasks []Task, l Limits) time.Duration {
	other := LowerBound(tasks, Limits{API: l.API, Workers: l.Workers})
	if l.Sessions <= 0 {
		return other
	}
	free := make([]time.Duration, l.Sessions) // when each session is next free
	var end time.Duration
	for _, t := range tasks {
		if t.Kind != taskfile.KindWeb {
			continue
		}
		i := 0
		for j := range free {
			if free[j] < free[i] {
				i = j
			}
		}
		free[i] += t.Dur
		end = max(end, free[i])
	}
	return max(end, other)
}
