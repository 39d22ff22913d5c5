package spool

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The task's life, in one place. Every move and rewrite of a task file
// that follows intake goes through these calls:
//
//	pending --Claim--> running (unmarked) --Mark--> running (owner, attempt)
//	  running --Beat--> running (heartbeatAt), fenced by owner and attempt
//	  running --Finish(outcome)--> done | failed | canceled | pending (retry)
//	  running --Return--> pending, the attempt not spent
//	running (owner gone or stale) --Reclaim--> pending | failed
//	pending --CancelPending--> canceled;  failed | canceled --Retry--> incoming
//
// The folder a file sits in is its state; a move that must not be done
// twice is a no-replace rename, which exactly one process wins.

// Outcome is how an attempt ended, as the scheduler decided it: what
// Lease.Finish records.
type Outcome struct {
	// State is the next state: success, failed or canceled (final), or
	// pending (back to the queue).
	State  taskfile.State
	Result string // the answer: on success, and on a failure to write it to output/
	// ResultFormat and ResultMethod: how a web answer was read.
	ResultFormat, ResultMethod string
	// ResultCheck and ResultDiff: how a web answer compares with the page.
	ResultCheck, ResultDiff string
	// ResultFallback: the read methods that did not deliver first.
	ResultFallback string
	// Usage: the answer's tokens as its API reported them (or, on the
	// web lane, as estimated); AttemptUsage is the attempt's own, kept in
	// its record whether or not it succeeded (a schema mismatch was paid
	// for too).
	Usage, AttemptUsage taskfile.Usage
	// Reasoning is the thinking kept beside Result (never part of it).
	Reasoning string
	// Artifacts are the generated files saved with Result.
	Artifacts []taskfile.Artifact
	// Modes are the page modes the attempt's send ran in, for its record.
	Modes string
	// Error is the one-line reason, with its Class, for anything but success.
	Error string
	Class taskfile.ErrorClass
	// NotBefore (pending only) is when the task is due again.
	NotBefore time.Time
	// Unspent (pending only) gives the attempt back: it does not count
	// towards maxRetries (shutdown, a claim handed back).
	Unspent bool
	// BrowserPID, if not zero, is the web attempt's browser, for whoever
	// debugs the task.
	BrowserPID int
	// HeldUntil (pending, unspent) is the end of the hold a usage limit
	// put on the attempt's account: the attempt's record says "held".
	HeldUntil time.Time
}

// Lease is one process's hold on a task it claimed: the task's file in
// running/. Only the lease's calls change that file, and once marked,
// every write is fenced by owner and attempt, so a holder that lost the
// task (frozen past staleAfter and reclaimed elsewhere) gets ErrFenced and
// writes nothing. Beat and RecordSend may be called from two goroutines
// (the heartbeat's and the executor's); every other call from one at a
// time.
type Lease struct {
	mu      sync.Mutex // serialises Beat and RecordSend: each rewrites task whole
	s       *Store
	kind    taskfile.Kind
	id      string
	owner   string
	account string         // the web session's account, written by Mark
	task    *taskfile.Task // as last read or written
	wrote   []byte         // the bytes of the record this lease last wrote (nil: none yet), its fence's known
	marked  bool           // Mark succeeded: owner and attempt now fence every write
	claimed time.Time      // when Claim moved it: the attempt's record starts there
}

// Claim takes pending/ID of lane k for owner: the move into running/ is
// what only one process wins; the loser gets an error matching
// os.ErrNotExist (another daemon claimed it, or a cancel took it). The
// move is not yet durable and the file not yet changed: Mark does both,
// on the runner's goroutine, so a scheduler's loop does no fsync. A crash
// in between leaves the task in pending/, or in running/ unmarked, which
// Reclaim returns to pending/ after the claim grace.
func (s *Store) Claim(k taskfile.Kind, id, owner string) (*Lease, error) {
	if err := s.renameNoSync(s.Layout.TaskPath(k, taskfile.DirPending, id), s.Layout.TaskPath(k, taskfile.DirRunning, id)); err != nil {
		return nil, err
	}
	return &Lease{s: s, kind: k, id: id, owner: owner, claimed: time.Now()}, nil
}

// ID is the leased task's id.
func (l *Lease) ID() string { return l.id }

// Task is the task as the lease last read or wrote it (nil before Mark or
// Load). Callers must not modify it.
func (l *Lease) Task() *taskfile.Task {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.task
}

// Load reads the claimed task, if the lease has not yet.
func (l *Lease) Load() (*taskfile.Task, error) {
	if l.task == nil {
		t, err := l.s.Read(l.kind, taskfile.DirRunning, l.id)
		if err != nil {
			return nil, err
		}
		l.task = t
	}
	return l.task, nil
}

// Mark rewrites the claimed task as running (attempt+1, startedAt and
// heartbeatAt now, owner; notBefore, finishedAt and browserPid cleared)
// and makes the claim durable. From here on owner and attempt fence every
// write. If it fails the lease stays unmarked: Return it.
func (l *Lease) Mark(now time.Time) (*taskfile.Task, error) {
	t, err := l.Load()
	if err != nil {
		return nil, err
	}
	m := t.Clone()
	m.State = taskfile.StateRunning
	m.Attempt++
	m.StartedAt, m.HeartbeatAt = now, now
	m.NotBefore, m.FinishedAt = time.Time{}, time.Time{}
	m.Owner, m.BrowserPID, m.Account = l.owner, 0, l.account
	m.OpenAttempt(l.claimed, now, l.owner, l.account)
	// The rewrite syncs running/, and the claim's source folder with it,
	// or a crash could bring the file back in pending/ as well.
	data, err := l.s.rewrite(l.kind, taskfile.DirRunning, m, l.s.Layout.Lane(l.kind, taskfile.DirPending))
	if err != nil {
		return nil, err
	}
	l.task, l.wrote, l.marked = m, data, true
	return m, nil
}

// OnAccount names the web session's account that the attempt runs on;
// Mark writes it into the task (status counts each session's tasks by it).
func (l *Lease) OnAccount(account string) { l.account = account }

// Beat records a sign of life: heartbeatAt = now, and the browser's pid
// if not zero. It returns an error matching ErrFenced if the task is no
// longer this lease's (the caller must stop and write nothing more).
func (l *Lease) Beat(now time.Time, browserPID int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.marked {
		return errNotMarked
	}
	hb := l.task.Clone()
	hb.HeartbeatAt = now
	if browserPID != 0 {
		hb.BrowserPID = browserPID
	}
	data, err := l.s.writeFenced(l.kind, taskfile.DirRunning, hb, l.owner, l.task.Attempt, l.wrote)
	if err != nil {
		return err
	}
	if err := fsx.SyncDir(l.s.Layout.Lane(l.kind, taskfile.DirRunning)); err != nil {
		return err
	}
	l.task, l.wrote = hb, data
	return nil
}

// finishTries and finishWait bound how long Finish retries a failing
// write (a full disk) before it leaves the task to go stale.
const (
	finishTries = 6
	finishWait  = 200 * time.Millisecond
)

// Finish records the attempt's outcome and moves the task to the
// outcome's folder. The write is fenced: a lease that lost the task gets
// ErrFenced and writes nothing. A failing write (a full disk) is retried
// for a few seconds; if it lasts, the file stays in running/ with its last
// heartbeat, goes stale and is reclaimed and run again: the result is
// lost, the task is not. A failed final move is left to recovery, which
// completes it (the record already holds the final state). It returns the
// task as written.
func (l *Lease) Finish(o Outcome, now time.Time) (*taskfile.Task, error) {
	t, err := l.Load()
	if err != nil {
		return nil, err
	}
	t = applyOutcome(t.Clone(), o, now, l.marked)
	wait := finishWait
	for try := 1; ; try++ {
		var werr error
		if l.marked {
			// The move below syncs both folders, which makes this durable too.
			_, werr = l.s.writeFenced(l.kind, taskfile.DirRunning, t, l.owner, l.task.Attempt, l.wrote)
		} else {
			_, werr = l.s.swapIn(l.kind, taskfile.DirRunning, t, nil, nil)
		}
		if werr == nil {
			break
		}
		if errors.Is(werr, ErrFenced) || try == finishTries {
			return nil, werr
		}
		l.s.Log.Error("final write failed: retrying", "lane", l.kind, "taskId", l.id, "err", werr, "in", wait)
		time.Sleep(wait) // back-off between tries of a failing disk, not synchronization
		wait *= 2
	}
	if !l.marked {
		if err := fsx.SyncDir(l.s.Layout.Lane(l.kind, taskfile.DirPending)); err != nil {
			return nil, err
		}
	}
	if err := l.s.move(l.kind, taskfile.DirRunning, taskfile.StateFolder(t.State), l.id); err != nil {
		return nil, fmt.Errorf("final move (recovery completes it): %w", err)
	}
	l.task = t
	return t, nil
}

// applyOutcome sets t's fields for outcome o at now; marked says whether
// t was marked running by this attempt (and so has an attempt to give back).
func applyOutcome(t *taskfile.Task, o Outcome, now time.Time, marked bool) *taskfile.Task {
	t.State = o.State
	if o.BrowserPID != 0 {
		t.BrowserPID = o.BrowserPID
	}
	t.Result, t.Error, t.ErrorClass = o.Result, o.Error, o.Class
	t.ResultFormat, t.ResultMethod = o.ResultFormat, o.ResultMethod
	t.ResultCheck, t.ResultDiff, t.ResultFallback = o.ResultCheck, o.ResultDiff, o.ResultFallback
	t.Usage = o.Usage
	t.Reasoning, t.Artifacts = o.Reasoning, o.Artifacts
	if marked {
		t.CloseAttempt(now, outcomeOf(o), o.Class, o.HeldUntil)
		if n := len(t.Attempts); n > 0 && o.ResultMethod != "" {
			t.Attempts[n-1].Method = o.ResultMethod // how this attempt's answer was read
		}
		if n := len(t.Attempts); n > 0 && o.Modes != "" {
			t.Attempts[n-1].Modes = o.Modes // the page modes this attempt's send ran in
		}
		if n := len(t.Attempts); n > 0 {
			t.Attempts[n-1].Usage = o.AttemptUsage
		}
	}
	if o.State != taskfile.StatePending {
		t.FinishedAt = now
		return t
	}
	// Nobody runs it until the next claim.
	t.Owner, t.BrowserPID = "", 0
	t.NotBefore = o.NotBefore
	if o.Unspent && marked {
		t.Attempt--
		t.StartedAt, t.HeartbeatAt = time.Time{}, time.Time{}
	}
	return t
}

// Return hands the task back to pending/ without spending an attempt. A
// marked lease rewrites it as pending, due at notBefore; an unmarked one
// moves it back as it was (it was never changed), and notBefore is for
// the caller's index alone.
func (l *Lease) Return(notBefore time.Time) error {
	if l.marked {
		_, err := l.Finish(Outcome{State: taskfile.StatePending, Unspent: true, NotBefore: notBefore}, time.Now())
		return err
	}
	return l.s.move(l.kind, taskfile.DirRunning, taskfile.DirPending, l.id)
}

// CancelPending cancels a task that waits in pending/: it claims it, as a
// runner would (the move only one process wins), and finishes it as
// canceled, so readers of canceled/ never see a half-written record. An
// error matching os.ErrNotExist means it is no longer pending (claimed or
// canceled meanwhile): look where it is now.
func (s *Store) CancelPending(k taskfile.Kind, id string, now time.Time) (*taskfile.Task, error) {
	l, err := s.Claim(k, id, "")
	if err != nil {
		return nil, err
	}
	return l.Finish(Outcome{State: taskfile.StateCanceled, Class: taskfile.ClassCanceled, Error: "canceled by request before it started"}, now)
}

// RequestCancel drops <lane>/cancel/ID: whichever daemon holds the task
// acts on it (pending at once, running at its next checkpoint).
func (s *Store) RequestCancel(k taskfile.Kind, id string) error {
	return s.files.WriteAtomic(s.Layout.CancelPath(k, id), nil)
}

// RetryError says why a task cannot be retried.
type RetryError struct {
	ID    string
	State taskfile.State // where the task is; "" when there is no such task
	// Rejected: the file is a rejected drop (NAME.error beside it), not a
	// task: it must be fixed and dropped again.
	Rejected bool
}

func (e *RetryError) Error() string {
	switch {
	case e.Rejected:
		return fmt.Sprintf("%s is a rejected drop (see %s): fix it and drop it again", e.ID, taskfile.ReasonFileName(e.ID))
	case e.State == "":
		return e.ID + ": no such task"
	}
	return fmt.Sprintf("%s is %s: only failed or canceled tasks can be retried", e.ID, e.State)
}

// Retryable returns the folder of lane k's task id if it can be retried
// (failed or canceled, and not a rejected drop), else a *RetryError.
func (s *Store) Retryable(k taskfile.Kind, id string) (string, error) {
	where := s.Layout.Locate(k, id)
	switch where {
	case taskfile.DirFailed, taskfile.DirCanceled:
	default:
		return where, &RetryError{ID: id, State: taskfile.FolderState[where]}
	}
	if s.Layout.IsRejectedDrop(k, where, id) {
		return where, &RetryError{ID: id, State: taskfile.FolderState[where], Rejected: true}
	}
	return where, nil
}

// Retry moves lane k's failed or canceled task id back into the lane's
// incoming/: intake clears what spoolgate wrote and runs it as new under
// the same taskId (the task's log keeps the history). Anything else is
// refused with a *RetryError (see Retryable). It returns the folder the
// task came from.
func (s *Store) Retry(k taskfile.Kind, id string) (string, error) {
	where, err := s.Retryable(k, id)
	if err != nil {
		return where, err
	}
	if err := s.files.RenameNoReplace(s.Layout.TaskPath(k, where, id), s.Layout.TaskPath(k, taskfile.DirIncoming, id)); err != nil {
		return where, fmt.Errorf("retry %s/%s: %w", k, id, err)
	}
	_ = s.AppendLog(k, id, "retry requested: moved from "+where+"/ back to incoming/")
	return where, nil
}

// OwnerOf is the `owner` value of this process on host: host:pid.
func OwnerOf(host string) string { return host + ":" + strconv.Itoa(os.Getpid()) }

// ParseOwner splits an owner value, host:pid; pid is 0 if there is none.
func ParseOwner(o string) (host string, pid int) {
	i := strings.LastIndexByte(o, ':')
	if i < 0 {
		return o, 0
	}
	pid, _ = strconv.Atoi(o[i+1:])
	return o[:i], pid
}

// outcomeOf names how an attempt that ends in o ended.
func outcomeOf(o Outcome) string {
	switch {
	case o.State == taskfile.StateSuccess:
		return taskfile.AttemptSuccess
	case o.State == taskfile.StateFailed:
		return taskfile.AttemptFailed
	case o.State == taskfile.StateCanceled:
		return taskfile.AttemptCanceled
	case !o.HeldUntil.IsZero():
		return taskfile.AttemptHeld
	case o.Unspent:
		return taskfile.AttemptReturned
	}
	return taskfile.AttemptRetried
}

// RecordSend rewrites the running task with its send record rec and this
// attempt's delivery line d (replacing an earlier line of the same
// attempt; d may be nil), fenced like Beat and durable before it returns:
// the caller sends only once the record is on disk. A lease that lost the
// task gets an error matching ErrFenced and must not send.
func (l *Lease) RecordSend(rec *taskfile.SendRecord, d *taskfile.Delivery) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.marked {
		return errNotMarked
	}
	t := l.task.Clone()
	if rec != nil {
		r := *rec
		t.Send = &r
	}
	if d != nil {
		t.SetDelivery(*d)
	}
	data, err := l.s.writeFenced(l.kind, taskfile.DirRunning, t, l.owner, l.task.Attempt, l.wrote)
	if err != nil {
		return err
	}
	if err := fsx.SyncDir(l.s.Layout.Lane(l.kind, taskfile.DirRunning)); err != nil {
		return err
	}
	l.task, l.wrote = t, data
	return nil
}

var errNotMarked = errors.New("write to a lease that is not marked")
