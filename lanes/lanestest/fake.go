// Package lanestest has a fake executor for tests of the spool and the
// lanes. It enforces the real limits that the stand-ins enforce: a web
// session that fails when two generations overlap, an API quota that
// answers "429". Tests shape each task through directives in its content:
//
//	[[duration=2s]]  the attempt takes this long (times Scale)
//	[[hang]]         never finishes (until canceled)
//	[[stuck]]        the first attempt never returns, canceled or not, as a
//	                 call blocked in the kernel (a hung share); only for a
//	                 daemon run as a subprocess, which it outlives
//	[[stall]]        never finishes and stops showing liveness
//	[[fail=N]]       the first N attempts fail transiently
//	[[status=400]]   fails permanently
//	[[empty]]        answers an empty text (a permanent failure)
//	[[bytes=N]]      answers about N bytes of text (BigAnswer)
//	[[limit=300ms]]  the first attempt meets a usage limit: an account
//	                 error carrying a hold of the account for that long
package lanestest

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Fake is an attempt.Executor for tests.
type Fake struct {
	// Exclusive makes overlapping calls of one account fail, as one chat
	// session does (the account is the job's web session's; calls without
	// a session are one account).
	Exclusive bool
	// Quota, if positive, refuses calls beyond it with a transient error.
	Quota int
	// Scale multiplies durations; 0 means 1.
	Scale float64
	// Trace, if set, gets "start ID unixnano" and "end ID unixnano" lines
	// (appended, for tests that watch another process).
	Trace string

	mu         sync.Mutex
	cur, max   int
	curAcct    map[string]int
	maxAcct    map[string]int
	ranOn      map[string][]string // task -> the accounts of its calls
	calls      map[string]int
	fails      map[string]int
	collisions int
	total      int
	began      []time.Time
}

var directiveRe = regexp.MustCompile(`\[\[([a-z]+)(?:=([^\]]*))?\]\]`)

// Directives parses [[key=value]] directives from content.
func Directives(content string) map[string]string {
	out := map[string]string{}
	for _, m := range directiveRe.FindAllStringSubmatch(content, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// Answer is the fake's deterministic answer to content.
func Answer(content string) string {
	return "Answer: " + strings.Join(strings.Fields(directiveRe.ReplaceAllString(content, " ")), " ")
}

func (f *Fake) enter(id, acct string) (collided bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls, f.fails = map[string]int{}, map[string]int{}
		f.curAcct, f.maxAcct, f.ranOn = map[string]int{}, map[string]int{}, map[string][]string{}
	}
	f.ranOn[id] = append(f.ranOn[id], acct)
	f.curAcct[acct]++
	f.maxAcct[acct] = max(f.maxAcct[acct], f.curAcct[acct])
	f.calls[id]++
	f.total++
	f.began = append(f.began, time.Now())
	f.cur++
	if f.cur > f.max {
		f.max = f.cur
	}
	if f.Exclusive && f.curAcct[acct] > 1 {
		f.collisions++
		return true
	}
	if f.Quota > 0 && f.cur > f.Quota {
		f.collisions++
		return true
	}
	return false
}

func (f *Fake) leave(acct string) {
	f.mu.Lock()
	f.curAcct[acct]--
	f.cur--
	f.mu.Unlock()
}

func (f *Fake) trace(what, id, acct string) {
	if f.Trace == "" {
		return
	}
	fh, err := os.OpenFile(f.Trace, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	if acct != "" {
		fmt.Fprintf(fh, "%s %s %d %s\n", what, id, time.Now().UnixNano(), acct)
	} else {
		fmt.Fprintf(fh, "%s %s %d\n", what, id, time.Now().UnixNano())
	}
	fh.Close()
}

// Execute implements attempt.Executor.
func (f *Fake) Execute(ctx context.Context, job *attempt.Job) (attempt.Result, error) {
	id, acct := job.Task.TaskID, job.Session.Account
	f.trace("start", id, acct)
	defer f.trace("end", id, acct)
	collided := f.enter(id, acct)
	defer f.leave(acct)
	if collided {
		if f.Exclusive {
			return attempt.Result{}, attempt.Errorf(taskfile.ClassTransient, "fake session: a second generation started while one runs")
		}
		return attempt.Result{}, &attempt.TaskError{Class: taskfile.ClassTransient, Err: fmt.Errorf("fake quota: 429 too many requests"), RetryAfter: time.Millisecond}
	}
	d := Directives(job.Task.Content)
	scale := f.Scale
	if scale == 0 {
		scale = 1
	}
	job.SetStage("generating")
	if _, ok := d["stall"]; ok {
		job.SetProbe(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		<-ctx.Done()
		return attempt.Result{}, context.Cause(ctx)
	}
	if _, ok := d["stuck"]; ok && job.Task.Attempt <= 1 {
		<-make(chan struct{})
	}
	if _, ok := d["hang"]; ok {
		<-ctx.Done()
		return attempt.Result{}, context.Cause(ctx)
	}
	if v, ok := d["duration"]; ok {
		dur, err := time.ParseDuration(v)
		if err != nil {
			return attempt.Result{}, attempt.Errorf(taskfile.ClassPermanent, "fake: bad duration %q", v)
		}
		t := time.NewTimer(time.Duration(float64(dur) * scale))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return attempt.Result{}, context.Cause(ctx)
		}
	}
	if v, ok := d["fail"]; ok {
		n, _ := strconv.Atoi(v)
		f.mu.Lock()
		f.fails[job.Task.Content]++
		k := f.fails[job.Task.Content]
		f.mu.Unlock()
		if k <= n {
			return attempt.Result{}, attempt.Errorf(taskfile.ClassTransient, "fake: failure %d of %d", k, n)
		}
	}
	if v, ok := d["limit"]; ok {
		hold, err := time.ParseDuration(v)
		if err != nil {
			return attempt.Result{}, attempt.Errorf(taskfile.ClassPermanent, "fake: bad limit %q", v)
		}
		f.mu.Lock()
		f.fails["limit "+job.Task.Content]++
		k := f.fails["limit "+job.Task.Content]
		f.mu.Unlock()
		if k == 1 {
			now := time.Now()
			return attempt.Result{}, &attempt.TaskError{Class: taskfile.ClassAccount, Err: fmt.Errorf("fake: usage limit, try again in %s", hold),
				Hold: &taskfile.Hold{Until: now.Add(hold), Since: now, Reason: "fake: usage limit", Site: "fake"}}
		}
	}
	if v, ok := d["status"]; ok {
		return attempt.Result{}, attempt.Errorf(taskfile.ClassPermanent, "fake: status %s", v)
	}
	if _, ok := d["empty"]; ok {
		return attempt.Result{}, attempt.Errorf(taskfile.ClassPermanent, "fake: empty answer")
	}
	job.Beat()
	if v, ok := d["bytes"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return attempt.Result{}, attempt.Errorf(taskfile.ClassPermanent, "fake: bad bytes %q", v)
		}
		return attempt.Result{Text: BigAnswer(job.Task.Content, n)}, nil
	}
	return attempt.Result{Text: Answer(job.Task.Content)}, nil
}

// BigAnswer is the answer of a [[bytes=N]] task: Answer's text, then lines
// of text up to N bytes.
func BigAnswer(content string, n int) string {
	var b strings.Builder
	b.WriteString(Answer(content))
	line := "\nA long answer line, as a model writes a long report, one of many."
	for b.Len()+len(line) <= n {
		b.WriteString(line)
	}
	return b.String()
}

// Max is the largest number of calls seen at once.
func (f *Fake) Max() int { f.mu.Lock(); defer f.mu.Unlock(); return f.max }

// MaxPerAccount is, per account, the largest number of its calls seen at
// once.
func (f *Fake) MaxPerAccount() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.maxAcct == nil {
		return map[string]int{}
	}
	return maps.Clone(f.maxAcct)
}

// RanOn returns the account of each call of id, in order.
func (f *Fake) RanOn(id string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ranOn[id]...)
}

// Current is how many calls run now.
func (f *Fake) Current() int { f.mu.Lock(); defer f.mu.Unlock(); return f.cur }

// Collisions counts calls refused for overlap or quota.
func (f *Fake) Collisions() int { f.mu.Lock(); defer f.mu.Unlock(); return f.collisions }

// Calls returns how many attempts id got.
func (f *Fake) Calls(id string) int { f.mu.Lock(); defer f.mu.Unlock(); return f.calls[id] }

// Total is the number of calls.
func (f *Fake) Total() int { f.mu.Lock(); defer f.mu.Unlock(); return f.total }

// CallCounts returns a copy of the per-task call counts.
func (f *Fake) CallCounts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		return map[string]int{}
	}
	return maps.Clone(f.calls)
}
