// Package attempt is the contract between a lane and the executor that runs
// one attempt of a task on a model: Executor, Job, Result, and the classed
// TaskError a failed attempt returns. It imports the task format and the
// config only, so an executor (lanes/apimodel, browser) need not import the
// Store.
package attempt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Executor runs one attempt of a task on one kind of model. The API and web
// models implement it; tests register fakes that enforce the real limits.
type Executor interface {
	// Execute runs one attempt and returns the answer. It must return soon
	// after ctx ends (cancel, timeout, shutdown, reclaim): context.Cause(ctx)
	// says why, and the lane decides the final state from that, not from the
	// error. Any other failure should be a *TaskError; a plain error counts
	// as transient.
	Execute(ctx context.Context, job *Job) (Result, error)
}

// Result is what a successful attempt produced.
type Result struct {
	Text string
	// Format and Method say how a web answer was read: Format is
	// "markdown" or "text", Method "network", "copy", "dom" or "text"
	// (empty for the API lane, whose text is the model's own).
	Format, Method string
	// Check and CheckDiff say how a web answer compares with what the
	// page showed: "verified", "differs" (CheckDiff says where) or
	// "unchecked"; empty for the API lane.
	Check, CheckDiff string
	// Usage is the tokens the API reported for the answer (zero when it
	// reported none, and on the web lane).
	Usage taskfile.Usage
	// Fallback names the read methods tried before Method that did not
	// deliver, comma-separated ("network,copy"); "" when the first did.
	Fallback string
	// Reasoning is a reasoning model's thinking, told apart from Text
	// (never part of it), as Markdown; empty when it showed none.
	Reasoning string
	// Modes (web) are the page modes the send ran in, as read back from
	// the page ("deepThink on, search off"); set even when the attempt
	// failed after they were set.
	Modes string
	// Artifacts are the generated files kept with the answer (saved
	// through Job.KeepArtifacts before the result goes back).
	Artifacts []taskfile.Artifact
}

// Job is one attempt of one task, as an executor sees it.
type Job struct {
	// Task is a copy of the task file as claimed; do not modify it.
	Task *taskfile.Task
	// Model is the task's model from the config.
	Model *config.ModelConfig
	// Log writes to the lane's log and to <lane>/logs/TASKID.log. The
	// web lane's self-check findings go here.
	Log *slog.Logger
	// Session is the web session the attempt runs on (zero in the API
	// lane): its account, site and profile.
	Session config.WebSession

	beats      atomic.Int64 // count of Beat calls
	browserPID atomic.Int64
	mu         sync.Mutex
	probe      func(context.Context) error
	stage      string
	record     func(*taskfile.SendRecord, *taskfile.Delivery) error
	logFiles   LogFiles
	saver      ArtifactSaver
	deliveries []taskfile.Delivery // recorded without a lane (tests)
}

// NewJob builds a Job; the lanes use it, and so can executor tests.
func NewJob(task *taskfile.Task, model *config.ModelConfig, log *slog.Logger) *Job {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Job{Task: task, Model: model, Log: log}
}

// Beat reports progress (a token arrived, a page answered). A beat since
// the last heartbeat period keeps the task's heartbeatAt fresh.
func (j *Job) Beat() { j.beats.Add(1) }

// Beats returns how many times Beat was called.
func (j *Job) Beats() int64 { return j.beats.Load() }

// SetProbe installs a liveness probe that the lane calls once per heartbeat
// period (the web lane's CDP round-trip). With a probe installed, a period
// with neither a beat nor a successful probe writes no heartbeat, so a hung
// executor goes stale and is reclaimed. Without one the attempt counts as
// alive: it is bounded by its own timeout.
func (j *Job) SetProbe(p func(context.Context) error) {
	j.mu.Lock()
	j.probe = p
	j.mu.Unlock()
}

// Probe returns the installed probe, or nil.
func (j *Job) Probe() func(context.Context) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.probe
}

// SetStage names what the attempt is doing now ("launching browser",
// "waiting for answer"); a cancel records the stage it reached.
func (j *Job) SetStage(s string) {
	j.mu.Lock()
	j.stage = s
	j.mu.Unlock()
}

// Stage returns the last stage set.
func (j *Job) Stage() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stage
}

// SetBrowserPID records the browser's pid; the lane writes it into the
// running file at the next heartbeat.
func (j *Job) SetBrowserPID(pid int) { j.browserPID.Store(int64(pid)) }

// BrowserPID returns the recorded browser pid, or 0.
func (j *Job) BrowserPID() int { return int(j.browserPID.Load()) }

// LogFiles keeps an attempt's own files beside the task logs,
// <lane>/logs/NAME (a failed web attempt's screenshot and page), written
// as the Store writes them. An executor reaches them through its Job, so
// it needs no Store of its own.
type LogFiles interface {
	// Save writes NAME (a plain file name) durably and returns its path
	// relative to the spool, as an operator on any machine finds it.
	Save(name string, data []byte) (string, error)
	// Remove deletes NAME; a NAME that is not there is an error matching
	// fs.ErrNotExist.
	Remove(name string) error
}

// ErrNoLogFiles is Job.SaveLogFile's error on a Job built without a lane's
// LogFiles.
var ErrNoLogFiles = errors.New("no log folder for this attempt")

// SetLogFiles installs where SaveLogFile and RemoveLogFile write.
func (j *Job) SetLogFiles(f LogFiles) {
	j.mu.Lock()
	j.logFiles = f
	j.mu.Unlock()
}

func (j *Job) files() LogFiles {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.logFiles
}

// SaveLogFile writes NAME beside the task logs (see LogFiles.Save).
func (j *Job) SaveLogFile(name string, data []byte) (string, error) {
	f := j.files()
	if f == nil {
		return "", ErrNoLogFiles
	}
	return f.Save(name, data)
}

// RemoveLogFile deletes NAME from beside the task logs.
func (j *Job) RemoveLogFile(name string) error {
	f := j.files()
	if f == nil {
		return ErrNoLogFiles
	}
	return f.Remove(name)
}

// SetRecorder installs what RecordSend calls: the lane's fenced write
// through the task's lease.
func (j *Job) SetRecorder(f func(*taskfile.SendRecord, *taskfile.Delivery) error) {
	j.mu.Lock()
	j.record = f
	j.mu.Unlock()
}

// RecordSend writes the attempt's send record and its delivery line
// (either may be nil) into the running task, fenced and durable before it
// returns (spool.Lease.RecordSend). A web executor calls it right before
// it sends (state sending) and once the page accepted the message (sent,
// with the conversation), and when it reattaches: an error means nothing
// may be sent (one matching spool.ErrFenced: the task is another
// daemon's now). A Job built outside a lane (executor tests) records into
// its Task only.
func (j *Job) RecordSend(rec *taskfile.SendRecord, d *taskfile.Delivery) error {
	j.mu.Lock()
	f := j.record
	j.mu.Unlock()
	if f != nil {
		return f(rec, d)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if rec != nil {
		r := *rec
		j.Task.Send = &r
	}
	if d != nil {
		j.deliveries = append(j.deliveries, *d)
	}
	return nil
}

// Deliveries are the delivery lines a Job built outside a lane recorded.
func (j *Job) Deliveries() []taskfile.Delivery {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]taskfile.Delivery(nil), j.deliveries...)
}

// TaskError is a failed attempt with its class.
type TaskError struct {
	Class taskfile.ErrorClass
	Err   error
	// RetryAfter, when positive, is the server's own wait (HTTP
	// Retry-After); it wins over the configured backoff.
	RetryAfter time.Duration
	// Hold, with class account, is a usage limit the site showed: the
	// lane holds the account (spool.Store.HoldAccount) and puts the task
	// back in pending without spending its attempt.
	Hold *taskfile.Hold
}

func (e *TaskError) Error() string {
	if e.Err == nil {
		return string(e.Class)
	}
	return e.Err.Error()
}

func (e *TaskError) Unwrap() error { return e.Err }

// HoldOf returns the account hold an attempt's error carries (class
// account, from a usage limit), or nil.
func HoldOf(err error) *taskfile.Hold {
	var te *TaskError
	for e := err; errors.As(e, &te); e = te.Err {
		if te.Hold != nil && te.Class == taskfile.ClassAccount {
			return te.Hold
		}
	}
	return nil
}

// Errorf builds a *TaskError of class c.
func Errorf(c taskfile.ErrorClass, format string, args ...any) *TaskError {
	return &TaskError{Class: c, Err: fmt.Errorf(format, args...)}
}

// Classify returns the class of err: a *TaskError's own, else transient.
func Classify(err error) taskfile.ErrorClass {
	var te *TaskError
	if errors.As(err, &te) {
		return te.Class
	}
	return taskfile.ClassTransient
}

// Causes passed to an attempt's context; an executor sees them through
// context.Cause and need not branch on them.
var (
	// ErrCanceled: the task was canceled by a user.
	ErrCanceled = errors.New("canceled by request")
	// ErrShutdown: the daemon is stopping; the task goes back to pending
	// without spending an attempt.
	ErrShutdown = errors.New("daemon shutting down")
	// ErrStale: the attempt stopped heartbeating and was reclaimed.
	ErrStale = errors.New("heartbeat stale")
	// ErrFenced: another daemon took the task over; write nothing more.
	ErrFenced = errors.New("task taken over by another owner")
	// ErrTimeout: the attempt ran past its time limit.
	ErrTimeout = errors.New("attempt timed out")
)
