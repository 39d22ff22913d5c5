package lanes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/spool"
)

// runner runs one attempt of one claimed task: the executor, its heartbeat
// and fencing, and the final write.
type runner struct {
	l       *Lane
	task    *spool.Task // as claimed; owner and attempt fence every write
	model   *spool.ModelConfig
	log     *slog.Logger
	cancelF context.CancelCauseFunc
	mu      sync.Mutex
	pending error // cause requested before the context existed
	job     *Job
	stageAt string // the job's stage when a cancel was requested
}

// canceled reports whether a cancel by request reached the runner before
// its attempt started (while it was still claiming).
func (r *runner) canceled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Is(r.pending, ErrCanceled)
}

// init gives a runner its claimed task; until then a cancel is only
// remembered (and applied when the attempt starts).
func (r *runner) init(t *spool.Task, m *spool.ModelConfig) {
	l := r.l
	r.task, r.model = t, m
	r.log = slog.New(teeHandler{
		a: l.log.With("taskId", t.TaskID).Handler(),
		b: newTaskLogHandler(l.store, l.kind, t.TaskID),
	}).With("attempt", t.Attempt)
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

	if l.kind == spool.KindWeb {
		webMu.Lock()
		defer webMu.Unlock()
	}
	// A safety net behind the executors' own limits (the model's timeout,
	// web.taskTimeout), which fire first and say which limit passed.
	limit := r.model.Timeout.D() + 30*time.Second
	if l.kind == spool.KindWeb {
		limit = l.cfg.Web.TaskTimeout.D() + 10*time.Second
	}
	ctx, cancelT := context.WithTimeoutCause(ctx, limit, ErrTimeout)
	defer cancelT()

	job := NewJob(r.task.Clone(), r.model, r.log)
	r.mu.Lock()
	r.job = job
	r.mu.Unlock()
	start := time.Now()
	r.log.Info("attempt started", "model", r.task.Model, "owner", r.task.Owner)

	hbDone := make(chan struct{})
	hbStop := make(chan struct{})
	go func() {
		defer close(hbDone)
		r.heartbeat(ctx, cancel, job, hbStop)
	}()
	res, err := l.exec.Execute(ctx, job)
	close(hbStop)
	<-hbDone
	r.finish(ctx, job, res, err, time.Since(start))
}

// heartbeat rewrites heartbeatAt every period while the executor shows
// liveness, checking first that the file is still ours. An attempt whose
// liveness lapses past staleAfter is stopped as stale.
func (r *runner) heartbeat(ctx context.Context, cancel context.CancelCauseFunc, job *Job, stop <-chan struct{}) {
	l := r.l
	period := l.cfg.Heartbeat.D()
	t := time.NewTicker(period)
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
			// The probe may take a third of staleAfter: a slow but live
			// browser must not go stale, a hung one must.
			pctx, pcancel := context.WithTimeout(ctx, min(l.cfg.StaleAfter.D()/3, 10*time.Second))
			perr := p(pctx)
			pcancel()
			alive = perr == nil
			if !alive {
				r.log.Warn("liveness probe failed: heartbeat withheld", "err", perr)
			}
		}
		now := time.Now()
		if !alive {
			if now.Sub(lastAlive) >= l.cfg.StaleAfter.D() {
				cancel(ErrStale)
				return
			}
			continue
		}
		lastAlive = now
		hb := r.task.Clone()
		hb.HeartbeatAt = now
		if pid := job.BrowserPID(); pid != 0 {
			hb.BrowserPID = pid
		}
		if err := l.store.WriteFenced(l.kind, spool.DirRunning, hb, r.task.Owner, r.task.Attempt); err != nil {
			if errors.Is(err, spool.ErrFenced) {
				r.log.Warn("task taken over by another daemon: stopping, writing nothing", "err", err)
				cancel(ErrFenced)
				return
			}
			r.log.Error("heartbeat write failed", "err", err)
			continue
		}
		r.task.HeartbeatAt, r.task.BrowserPID = hb.HeartbeatAt, hb.BrowserPID
	}
}

// finish decides the attempt's outcome and writes it: success keeps its real
// result even if a cancel arrived late; a cancel is recorded with the stage
// it reached; shutdown returns the task to pending without spending the
// attempt; transient and stale failures are retried while attempts remain.
func (r *runner) finish(ctx context.Context, job *Job, res Result, err error, took time.Duration) {
	l := r.l
	t := r.task.Clone()
	now := time.Now()
	if pid := job.BrowserPID(); pid != 0 {
		t.BrowserPID = pid
	}
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrFenced) {
		return // the task is another daemon's now; write nothing
	}
	class := spool.ErrorClass("")
	var retryAfter time.Duration
	switch {
	case err == nil:
		if werr := r.writeOutput(res.Text); werr != nil {
			err, class = werr, Classify(werr)
			break
		}
		t.State, t.Result, t.Error, t.ErrorClass = spool.StateSuccess, res.Text, "", ""
	case errors.Is(cause, ErrShutdown):
		t.State, t.Attempt = spool.StatePending, t.Attempt-1
		t.Error, t.ErrorClass = "interrupted by shutdown: "+errString(err), ""
		t.HeartbeatAt, t.StartedAt = time.Time{}, time.Time{}
	case errors.Is(cause, ErrCanceled):
		r.mu.Lock()
		stage := r.stageAt
		r.mu.Unlock()
		if stage == "" {
			stage = "running"
		}
		t.State, t.ErrorClass = spool.StateCanceled, spool.ClassCanceled
		t.Error = "canceled by request while " + stage
	case errors.Is(cause, ErrStale):
		class = spool.ClassStale
		err = fmt.Errorf("no liveness for %s: %w", l.cfg.StaleAfter.D(), ErrStale)
	case errors.Is(cause, ErrTimeout):
		class = spool.ClassTransient
		err = fmt.Errorf("%w after %s: %s", ErrTimeout, took.Round(time.Millisecond), errString(err))
	default:
		class = Classify(err)
		var te *TaskError
		if errors.As(err, &te) {
			retryAfter = te.RetryAfter
		}
	}
	if class != "" {
		t.Error, t.ErrorClass = oneLine(errString(err)), class
		if (class == spool.ClassTransient || class == spool.ClassStale) && t.Attempt < l.cfg.MaxAttempts() {
			t.State = spool.StatePending
			t.NotBefore = now.Add(r.backoff(t.Attempt, retryAfter))
		} else {
			t.State = spool.StateFailed
		}
	}
	if t.State == spool.StatePending {
		t.Owner, t.BrowserPID = "", 0 // nobody runs it until the next claim
	} else {
		t.FinishedAt = now
	}
	// Fenced final write: a late runner never overwrites a newer record.
	// Other failures (a full disk) are retried for a while; if they last,
	// the file stays in running/ with its last heartbeat, goes stale, and
	// is reclaimed and run again: the result is lost, the task is not.
	for try, wait := 1, 200*time.Millisecond; ; try, wait = try+1, wait*2 {
		werr := l.store.WriteFencedBeforeMove(l.kind, spool.DirRunning, t, r.task.Owner, r.task.Attempt)
		if werr == nil {
			break
		}
		if errors.Is(werr, spool.ErrFenced) {
			r.log.Warn("final write refused: task is no longer ours", "err", werr)
			return
		}
		if try == 6 {
			r.log.Error("final write failed: leaving the task to go stale and be reclaimed", "err", werr, "tries", try)
			return
		}
		r.log.Error("final write failed: retrying", "err", werr, "in", wait)
		time.Sleep(wait) // back-off between tries of a failing disk, not synchronization
	}
	if merr := l.store.Move(l.kind, spool.DirRunning, spool.StateFolder(t.State), t.TaskID); merr != nil {
		r.log.Error("final move failed: recovery will complete it", "state", t.State, "err", merr)
		return
	}
	switch t.State {
	case spool.StatePending:
		if t.ErrorClass != "" {
			r.log.Warn("attempt failed: retry scheduled", "errorClass", t.ErrorClass, "error", t.Error, "notBefore", t.NotBefore.Format(time.RFC3339))
		} else {
			r.log.Info("attempt interrupted by shutdown: back to pending")
		}
		l.Requeue(t)
	case spool.StateSuccess:
		r.log.Info("success", "took", took.Round(time.Millisecond))
	default:
		r.log.Warn("finished", "state", t.State, "errorClass", t.ErrorClass, "error", t.Error)
	}
	if l.hooks.OnAttemptEnd != nil {
		l.hooks.OnAttemptEnd(l.kind, t, took)
	}
}

// backoff is retryBackoff doubled per retry; a server's Retry-After wins.
func (r *runner) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	d := r.l.cfg.RetryBackoff.D()
	for i := 1; i < attempt && d < time.Hour; i++ {
		d *= 2
	}
	return d
}

// writeOutput writes the answer to <spool>/output/<output>, durably, never
// through a symlink: every folder on the way must be a real folder inside
// the spool.
func (r *runner) writeOutput(text string) error {
	if r.task.Output == "" {
		return nil
	}
	if err := spool.CheckOutputPath(r.task.Output); err != nil {
		return Errorf(spool.ClassPermanent, "output: %v", err)
	}
	root := r.l.store.L.Output()
	rel := filepath.FromSlash(filepath.ToSlash(r.task.Output))
	dir := root
	parts := strings.Split(filepath.Dir(rel), string(filepath.Separator))
	for _, p := range parts {
		if p == "." || p == "" {
			continue
		}
		dir = filepath.Join(dir, p)
		fi, err := os.Lstat(dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if err := os.Mkdir(dir, spool.DirPerm); err != nil && !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("output: %w", err)
			}
		case err != nil:
			return fmt.Errorf("output: %w", err)
		case !fi.IsDir():
			return Errorf(spool.ClassPermanent, "output: %s is not a folder (symlink?): refusing to write through it", dir)
		}
	}
	dst := filepath.Join(root, rel)
	if fi, err := os.Lstat(dst); err == nil && !fi.Mode().IsRegular() {
		return Errorf(spool.ClassPermanent, "output: %s exists and is not a regular file", dst)
	}
	if err := spool.WriteFileAtomic(dst, []byte(text)); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
