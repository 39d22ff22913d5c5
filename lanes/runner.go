package lanes

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// runner runs one attempt of one claimed task: the executor, its heartbeat
// and the final write, all through the task's lease.
type runner struct {
	l       *Lane
	sess    *session  // the web session it runs on; nil in the API lane
	leaseOK time.Time // the account lease's last renewal (heartbeat goroutine only)
	lease   *spool.Lease
	task    *taskfile.Task // as marked; the lease fences every write by its owner and attempt
	output  string         // the task's spool.OutputKey, from its claim on (see OutputOwner)
	model   *config.ModelConfig
	log     *slog.Logger
	logFile *spool.TaskLog // the task log, open for the attempt: run closes it
	cancelF context.CancelCauseFunc
	mu      sync.Mutex
	pending error // cause requested before the context existed
	job     *attempt.Job
	stageAt string // the job's stage when a cancel was requested
	execErr error  // the executor's error, for the lane's Admission
	// delivered is how the attempt delivered its prompt, as last logged
	// (executor goroutine only).
	delivered taskfile.DeliveryHow
}

// canceled reports whether a cancel by request reached the runner before
// its attempt started (while it was still claiming).
func (r *runner) canceled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Is(r.pending, attempt.ErrCanceled)
}

// init gives a runner its claimed task; until then a cancel is only
// remembered (and applied when the attempt starts).
func (r *runner) init(lease *spool.Lease, t *taskfile.Task, m *config.ModelConfig) {
	l := r.l
	r.lease, r.task, r.model = lease, t, m
	r.logFile = l.c.Store.TaskLog(l.c.Kind, t.TaskID)
	r.log = slog.New(teeHandler{
		a: l.c.Log.With("taskId", t.TaskID).Handler(),
		b: newTaskLogHandler(r.logFile),
	}).With("attempt", t.Attempt)
	if r.sess != nil {
		r.log = r.log.With("account", r.sess.spec.Account)
	}
}

// cancel stops the attempt with cause (ErrCanceled, ErrShutdown, ...).
func (r *runner) cancel(cause error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.job != nil && r.stageAt == "" {
		// What the attempt was doing when asked to stop, before the
		// executor moves on to closing things down.
		r.stageAt = r.job.Stage()
	}
	if r.cancelF != nil {
		r.cancelF(cause)
	} else if r.pending == nil {
		r.pending = cause
	}
}

func (r *runner) run(parent context.Context) {
	l := r.l
	defer r.logFile.Close() // what the executor logs later opens the file for its line
	// Detach from the lane's context: shutdown reaches a runner only
	// through cancel(ErrShutdown), so it can put the task back.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	defer cancel(nil)
	r.mu.Lock()
	r.cancelF = cancel
	if r.pending != nil {
		cancel(r.pending)
	}
	r.mu.Unlock()

	// A safety net behind the executors' own limits (the model's timeout,
	// web.taskTimeout), which fire first and say which limit passed.
	limit := r.model.Timeout.D() + 30*time.Second
	if l.c.Kind == taskfile.KindWeb {
		limit = l.cfg().Web.TaskTimeout.D() + 10*time.Second
	}
	ctx, cancelT := context.WithTimeoutCause(ctx, limit, attempt.ErrTimeout)
	defer cancelT()

	releaseRun := func() {}
	if len(r.task.Attachments) > 0 && !r.task.AttachmentsRecorded() {
		// Intake's record of them was dropped with the daemon's other
		// fields (the pending file was edited on the share: its seal
		// failed), so the task runs as a fresh drop would: its
		// attachments checked again, by intake's rules, from its lane's
		// incoming/ and files/. A refusal fails it with intake's reason.
		if rej := l.c.Store.CheckAttachments(r.task, l.c.Store.Layout.Lane(l.c.Kind, taskfile.DirIncoming)); rej != nil {
			r.finish(ctx, attempt.NewJob(r.task.Clone(), r.model, r.log), attempt.Result{}, attempt.Errorf(rej.Class, "attachments checked again (the task file was edited after intake): %s", rej.Msg), 0)
			return
		}
		r.log.Info("attachments checked again: the task file was edited after intake", "files", len(r.task.AttachmentsChecked))
	}
	job := attempt.NewJob(withSchema(r.task.Clone(), r.model), r.model, r.log)
	exec := l.c.Executor
	if r.sess != nil {
		job.Session, exec = r.sess.spec, r.sess.exec
	}
	job.SetLogFiles(l.c.Store.LogFiles(l.c.Kind))
	job.SetArtifactSaver(l.c.Store.ArtifactSaver(l.c.Kind, r.task.TaskID, r.task.Output).For(r.lease))
	job.SetRecorder(func(rec *taskfile.SendRecord, d *taskfile.Delivery) error { return r.recordSend(cancel, rec, d) })
	r.mu.Lock()
	r.job = job
	r.mu.Unlock()
	if r.sess != nil {
		// The guarantee of web exclusivity, per session (see
		// spool.RunnerLock).
		release, err := r.sess.lock.Run()
		if err != nil {
			r.finish(ctx, job, attempt.Result{}, attempt.Errorf(taskfile.ClassTransient, "%w", err), 0)
			return
		}
		var once sync.Once
		releaseRun = func() { once.Do(release) }
		defer releaseRun()
	}
	start := time.Now()
	r.log.Info("attempt started", "model", r.task.Model, "owner", r.task.Owner)
	if l.c.Hooks.OnAttemptStart != nil {
		l.c.Hooks.OnAttemptStart(l.c.Kind, r.task.Clone())
	}

	hbDone := make(chan struct{})
	hbStop := make(chan struct{})
	go func() {
		defer close(hbDone)
		r.heartbeat(ctx, cancel, job, hbStop)
	}()
	var res attempt.Result
	var err error
	if l.c.Admission != nil {
		// A rate counts requests when they are sent: wait for this one's
		// turn (a claim's latency varies; the spacing must not).
		err = l.c.Admission.Ready(ctx, r.task.Model)
	}
	if err == nil {
		res, err = exec.Execute(ctx, job)
	}
	if err == nil {
		res, err = checkSchema(r.task, estimateUsage(job, res))
	}
	r.execErr = err
	close(hbStop)
	<-hbDone
	took := time.Since(start)
	if r.sess != nil && err == nil && ctx.Err() == nil {
		// The page answered and is free: hand the session over now, as
		// one lane hands a slot over, and record the outcome (two
		// durable writes) while its next task starts. A failed attempt
		// keeps the session until its outcome is written: a usage limit
		// must hold the account before the session claims again.
		releaseRun()
		l.sessionFree(r.sess, r.task.TaskID)
	}
	r.finish(ctx, job, res, err, took)
}

// heartbeat rewrites heartbeatAt every period while the executor shows
// liveness; the lease checks first that the file is still ours. An attempt
// whose liveness lapses past the liveness deadline is stopped as stale.
func (r *runner) heartbeat(ctx context.Context, cancel context.CancelCauseFunc, job *attempt.Job, stop <-chan struct{}) {
	tm := r.l.timing()
	t := time.NewTicker(tm.Heartbeat)
	defer t.Stop()
	lastBeats := job.Beats()
	lastAlive := time.Now()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		alive := false
		if b := job.Beats(); b != lastBeats {
			lastBeats, alive = b, true
		} else if p := job.Probe(); p == nil {
			alive = true
		} else {
			pctx, pcancel := context.WithTimeout(ctx, tm.ProbeTimeout)
			perr := p(pctx)
			pcancel()
			alive = perr == nil
			if !alive {
				r.log.Warn("liveness probe failed: heartbeat withheld", "err", perr)
			}
		}
		now := time.Now()
		if !alive {
			if now.Sub(lastAlive) >= tm.LivenessDeadline {
				cancel(attempt.ErrStale)
				return
			}
			continue
		}
		lastAlive = now
		if !r.renewAccount(now, cancel) {
			return
		}
		if err := r.lease.Beat(now, job.BrowserPID()); err != nil {
			if errors.Is(err, spool.ErrFenced) {
				r.log.Warn("task taken over by another daemon: stopping, writing nothing", "err", err)
				cancel(attempt.ErrFenced)
				return
			}
			r.log.Error("heartbeat write failed", "err", err)
		}
	}
}

// finish decides the attempt's outcome (decide: no disk) and records it
// with one call of the lease.
func (r *runner) finish(ctx context.Context, job *attempt.Job, res attempt.Result, err error, took time.Duration) {
	l := r.l
	r.mu.Lock()
	stage := r.stageAt
	r.mu.Unlock()
	end := attemptEnd{
		Err: err, Cause: context.Cause(ctx), Text: res.Text, Format: res.Format, Method: res.Method, Check: res.Check, CheckDiff: res.CheckDiff, Fallback: res.Fallback, Usage: res.Usage, Reasoning: res.Reasoning, Artifacts: res.Artifacts, Modes: res.Modes, Stage: stage, Attempt: r.task.Attempt, Took: took,
		MaxAttempts: l.cfg().MaxAttempts(), StaleAfter: l.timing().StaleAfter, RetryBackoff: l.cfg().RetryBackoff.D(),
		Now: time.Now(), BrowserPID: job.BrowserPID(),
	}
	if job.Model != nil && !job.Model.KeepsReasoning() {
		end.Reasoning = "" // the model's keepReasoning: false
	}
	if err == nil && !errors.Is(end.Cause, attempt.ErrFenced) {
		end.OutputErr = r.writeOutput(res.Text)
	}
	o, write := decide(end)
	if !write {
		return // the task is another daemon's now
	}
	r.holdOrRelease(&o, err, end.Now)
	t, ferr := r.lease.Finish(o, end.Now)
	switch {
	case errors.Is(ferr, spool.ErrFenced):
		r.log.Warn("final write refused: task is no longer ours", "err", ferr)
		return
	case ferr != nil:
		r.log.Error("final write failed: leaving the task to go stale and be reclaimed, or recovery to complete it", "state", o.State, "err", ferr)
		return
	}
	switch t.State {
	case taskfile.StatePending:
		switch {
		case t.ErrorClass != "":
			r.log.Warn("attempt failed: retry scheduled", "errorClass", t.ErrorClass, "error", t.Error, "notBefore", t.NotBefore.Format(time.RFC3339))
		case attempt.HoldOf(err) != nil:
			r.log.Info("attempt met a hold on its account (" + attempt.HoldOf(err).What() + "): back to pending, no attempt spent")
		default:
			r.log.Info("attempt interrupted by shutdown: back to pending")
		}
		l.Requeue(t)
	case taskfile.StateSuccess:
		r.log.Info("success", "took", took.Round(time.Millisecond))
	default:
		r.log.Warn("finished", "state", t.State, "errorClass", t.ErrorClass, "error", t.Error)
	}
	if r.sess != nil {
		l.sessionEnded(r.sess, t, err)
	}
	if l.c.Hooks.OnAttemptEnd != nil {
		l.c.Hooks.OnAttemptEnd(l.c.Kind, t, took)
	}
	l.c.Hooks.final(l.c.Kind, t)
}

// holdOrRelease writes the account's hold when a usage limit ended the
// attempt (a hold that cannot be written defers the task until the hold's
// end instead), and removes an ended hold once a task of the account has
// succeeded.
func (r *runner) holdOrRelease(o *spool.Outcome, err error, now time.Time) {
	acct := r.model.Account
	if r.sess != nil && !r.sess.spec.Legacy {
		acct = r.sess.spec.Account // the session's account met the limit, whatever the model names
	}
	if h := attempt.HoldOf(err); h != nil && h.SignIn() && acct == "" && r.sess != nil {
		// The one session of a config without accounts: its page is
		// signed out whatever the model, and its account holds it.
		acct = r.sess.spec.Account
	}
	if acct == "" {
		return
	}
	st := r.l.c.Store
	if h := attempt.HoldOf(err); h != nil && o.State == taskfile.StatePending {
		hold := *h
		hold.Account, hold.By, hold.Task = acct, r.task.Owner, r.task.TaskID
		if werr := st.HoldAccount(hold); werr != nil {
			r.log.Error("cannot write the account's hold: deferring the task instead", "account", acct, "err", werr)
			o.NotBefore = hold.Until
			if hold.SignIn() {
				o.NotBefore = now.Add(r.l.cfg().RetryBackoff.D())
			}
			return
		}
		if hold.SignIn() {
			r.log.Warn("account held: "+hold.What()+": its tasks wait until an operator signs in or releases it", "account", acct, "reason", hold.Reason, "screenshot", hold.Screenshot)
			return
		}
		r.log.Warn("account held by a usage limit: its tasks wait", "account", acct, "until", hold.Until.Format(time.RFC3339), "reason", hold.Reason)
		return
	}
	if o.State == taskfile.StateSuccess {
		if h, ok := st.AccountHold(acct); ok && !h.Active(now) {
			if _, rerr := st.ReleaseAccount(acct); rerr == nil {
				r.log.Info("account's ended hold removed after a success", "account", acct)
			}
		}
	}
}

// writeOutput writes the answer to <spool>/output/<output>, durably and
// race-free, never through a symlink, never over a file this task did not
// write (spool.Store.WriteOutputFor).
func (r *runner) writeOutput(text string) error {
	if r.task.Output == "" {
		return nil
	}
	if err := r.l.c.Store.WriteOutputFor(r.lease, r.task.Output, []byte(text)); err != nil {
		return attempt.Errorf(taskfile.ClassPermanent, "output: %v", err)
	}
	return nil
}

// renewAccount renews the session's account lease with the task's
// heartbeat. A lease another host took (ours went unrenewed past
// staleAfter) stops the attempt as stale: the account is driven from there
// now. It reports whether the attempt goes on.
func (r *runner) renewAccount(now time.Time, cancel context.CancelCauseFunc) bool {
	if r.sess == nil {
		return true
	}
	r.sess.mu.Lock()
	lease := r.sess.lease
	r.sess.mu.Unlock()
	if lease == nil {
		return true
	}
	if r.leaseOK.IsZero() {
		r.leaseOK = lease.Info().Renewed
	}
	err := lease.Renew(now)
	if errors.Is(err, spool.ErrLeaseLost) {
		r.log.Warn("account lease taken by another host: stopping", "account", r.sess.spec.Account, "err", err)
		cancel(attempt.ErrStale)
		return false
	}
	if err != nil {
		r.l.c.Store.Limiter().Fail("account lease renewal:"+r.sess.spec.Account, "account lease renewal failed", err, "account", r.sess.spec.Account)
		// Past half of staleAfter without a renewal, another host may
		// soon take the account: stop before it can, not after.
		if now.Sub(r.leaseOK) > r.l.timing().StaleAfter/2 {
			cancel(attempt.ErrStale)
			return false
		}
		return true
	}
	r.leaseOK = now
	return true
}
