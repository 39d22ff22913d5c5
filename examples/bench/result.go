package bench

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Result is what one strategy did with one workload. Durations are as
// measured (scaled time); Unscale turns them into field-report time.
type Result struct {
	Strategy string
	// Note says what the strategy is, in one line.
	Note string
	// Scale is the stand-ins' time scale.
	Scale float64
	// Makespan runs from the first drop to the last final outcome.
	Makespan time.Duration
	// Limits are the strategy's; LowerBound is LowerBound(tasks, Limits)
	// times Scale.
	Limits     Limits
	LowerBound time.Duration
	// APIWaits and WebWaits are, per task that started, the first
	// attempt's start minus its submission.
	APIWaits, WebWaits []time.Duration
	// WebAttempts counts calls to the web model; WebCollisions those the
	// session refused because another generation was running.
	WebAttempts, WebCollisions int
	// APIAttempts counts calls to the API model; Throttled those answered
	// 429 by the vendor's quota.
	APIAttempts, Throttled int
	// WebFailed and APIFailed count tasks that ended failed (retries
	// spent); Lost counts tasks with no final outcome at all.
	WebFailed, APIFailed, Lost int
	// Retries counts attempts after a task's first.
	Retries int
	// WebGaps are the idle times of the web model between one web call's
	// end and the next one's start (not time-scaled): the scheduler's own
	// per-task cost when web calls run back to back.
	WebGaps []time.Duration
	// APIGaps are, while API tasks wait, the times from one API call's end
	// to the start of the call that takes its slot (not time-scaled).
	APIGaps []time.Duration
	// FirstWebStart is from the first submission to the first web call.
	FirstWebStart time.Duration
	// MaxWebCalls and MaxAPICalls are the most calls of each kind in
	// progress at once, as the strategy's side saw them (a call whose 429s
	// are retried inside it counts once).
	MaxWebCalls, MaxAPICalls int
	// MaxWebAtOnce and MaxAPIAtOnce are the most calls the stand-ins saw
	// at once (the web one's on the session, the API one's answered). The
	// API stand-in counts a streamed answer until its handler returns, a
	// moment after the client has read the end: it can see one more call
	// than the client had open.
	MaxWebAtOnce, MaxAPIAtOnce int
}

// Ratio is Makespan over LowerBound.
func (r Result) Ratio() float64 {
	if r.LowerBound <= 0 {
		return 0
	}
	return float64(r.Makespan) / float64(r.LowerBound)
}

// WebFailureRate is the share of web attempts that failed by collision.
func (r Result) WebFailureRate() float64 {
	if r.WebAttempts == 0 {
		return 0
	}
	return float64(r.WebCollisions) / float64(r.WebAttempts)
}

// tally records attempts and outcomes from many goroutines.
type tally struct {
	mu        sync.Mutex
	kinds     map[string]taskfile.Kind
	submitted map[string]time.Time
	started   map[string]time.Time // first attempt
	state     map[string]taskfile.State
	last      time.Time            // latest final outcome
	open      map[string]time.Time // calls in progress
	apiStarts []time.Time
	apiEnds   []time.Time
	spans     [][2]time.Time        // web calls, start and end
	calls     map[taskfile.Kind]int // calls in progress
	res       Result
}

func newTally(tasks []Task) *tally {
	t := &tally{kinds: map[string]taskfile.Kind{}, submitted: map[string]time.Time{},
		started: map[string]time.Time{}, state: map[string]taskfile.State{}, open: map[string]time.Time{},
		calls: map[taskfile.Kind]int{}}
	for _, k := range tasks {
		t.kinds[k.ID] = k.Kind
	}
	return t
}

func (t *tally) submit(id string, at time.Time) {
	t.mu.Lock()
	t.submitted[id] = at
	t.mu.Unlock()
}

// attempt records the start of a call to the model.
func (t *tally) attempt(id string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.started[id]; ok {
		t.res.Retries++
	} else {
		t.started[id] = at
	}
	k := t.kinds[id]
	t.calls[k]++
	if k == taskfile.KindWeb {
		t.res.WebAttempts++
		t.res.MaxWebCalls = max(t.res.MaxWebCalls, t.calls[k])
		t.open[id] = at
	} else {
		t.res.APIAttempts++
		t.res.MaxAPICalls = max(t.res.MaxAPICalls, t.calls[k])
		t.apiStarts = append(t.apiStarts, at)
	}
}

// outcome records how a call ended.
func (t *tally) outcome(id string, err error) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls[t.kinds[id]]--
	if t.kinds[id] == taskfile.KindAPI {
		t.apiEnds = append(t.apiEnds, now)
	}
	if st, ok := t.open[id]; ok {
		delete(t.open, id)
		t.spans = append(t.spans, [2]time.Time{st, now})
	}
	if errors.Is(err, ErrCollision) {
		t.res.WebCollisions++
	}
	if throttled(err) {
		t.res.Throttled++
	}
}

// throttle records a 429 that the caller retries itself, in the same
// attempt (as an API client library does).
func (t *tally) throttle() {
	t.mu.Lock()
	t.res.Throttled++
	t.res.APIAttempts++
	t.mu.Unlock()
}

// final records a task's final state; it reports how many tasks have one.
func (t *tally) final(id string, s taskfile.State, at time.Time) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.state[id]; !ok {
		t.state[id] = s
		if at.After(t.last) {
			t.last = at
		}
	}
	return len(t.state)
}

// result builds the Result; t0 is when the first task was submitted.
func (t *tally) result(name, note string, tasks []Task, t0 time.Time, scale float64, l Limits) Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.res
	r.Strategy, r.Note, r.Scale, r.Limits = name, note, scale, l
	r.LowerBound = time.Duration(float64(LowerBound(tasks, l)) * scale)
	if !t.last.IsZero() {
		r.Makespan = t.last.Sub(t0)
	}
	for _, k := range tasks {
		st, ok := t.started[k.ID]
		if ok {
			w := st.Sub(t.submitted[k.ID])
			if k.Kind == taskfile.KindWeb {
				r.WebWaits = append(r.WebWaits, w)
			} else {
				r.APIWaits = append(r.APIWaits, w)
			}
		}
		switch s, ok := t.state[k.ID]; {
		case !ok:
			r.Lost++
		case s != taskfile.StateSuccess && k.Kind == taskfile.KindWeb:
			r.WebFailed++
		case s != taskfile.StateSuccess:
			r.APIFailed++
		}
	}
	spans := slices.Clone(t.spans)
	slices.SortFunc(spans, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
	for i := 1; i < len(spans); i++ {
		if g := spans[i][0].Sub(spans[i-1][1]); g >= 0 {
			r.WebGaps = append(r.WebGaps, g)
		}
	}
	// The i-th API call to end frees the slot of the (c+i)-th to start.
	starts, ends := slices.Clone(t.apiStarts), slices.Clone(t.apiEnds)
	slices.SortFunc(starts, time.Time.Compare)
	slices.SortFunc(ends, time.Time.Compare)
	for i := 0; l.API > 0 && l.API+i < len(starts) && i < len(ends); i++ {
		if g := starts[l.API+i].Sub(ends[i]); g >= 0 {
			r.APIGaps = append(r.APIGaps, g)
		}
	}
	if len(spans) > 0 {
		r.FirstWebStart = spans[0][0].Sub(t0)
	}
	return r
}

// throttled reports a 429: a transient error carrying the server's wait.
func throttled(err error) bool {
	var te *attempt.TaskError
	return errors.As(err, &te) && te.RetryAfter > 0
}
