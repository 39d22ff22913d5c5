// This file holds a lane's claim of one pending task: the move into
// running/ that only one daemon wins, the runner's registration and
// release, and the marking of the claimed task as running.

package lanes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// claim takes one pending task: the move into running/ is what only one
// daemon can win. The rest of the claim (read, rewrite as running, make it
// durable) runs on the new runner's goroutine, before the work starts, so
// that the lane's loop does no fsync and claims for several slots proceed
// (and reach the disk) together. It reports whether a runner started.
func (l *Lane) claim(ctx context.Context, e Entry, s *session) bool {
	l.c.Index.Remove(e.ID)
	// The runner is registered before the move, so that a cancel request
	// finds it at every moment the task is in running/ on our behalf.
	r := &runner{l: l, output: e.Output, sess: s}
	admitted := func(error) {}
	if l.c.Admission != nil {
		rel, ok := l.c.Admission.Acquire(e, time.Now())
		if !ok {
			l.c.Index.Put(e) // not admitted after all: it stays pending
			return false
		}
		admitted = rel
	}
	l.mu.Lock()
	if l.draining {
		l.mu.Unlock()
		admitted(nil)
		l.c.Index.Put(e) // shutdown began: leave it pending
		return false
	}
	if _, busy := l.running[e.ID]; busy {
		// A runner of ours still holds this id: a retry requeued before
		// its runner let go, or an index entry from a listing that lags a
		// link+unlink move (FUSE). Claiming now would replace that
		// runner's registration, and a failed claim would then drop it:
		// reclaim would take the live task back as "not run by this
		// daemon" and run it twice. Put the entry back once it lets go.
		l.deferred[e.ID] = e
		l.mu.Unlock()
		admitted(nil)
		return false
	}
	l.running[e.ID] = r
	if s != nil {
		s.mu.Lock()
		s.running = e.ID
		s.mu.Unlock()
	}
	// Add under l.mu: Drain takes l.mu too, so no Add follows a Drain and
	// WaitRunning's Wait never races an Add.
	l.wg.Add(1)
	l.mu.Unlock()
	release := func() {
		if r.canceled() {
			// A cancel request reached this claim and was consumed, but
			// the task is not ours to run: ask again, so the next rescan
			// cancels it wherever it is.
			if err := l.c.Store.RequestCancel(l.c.Kind, e.ID); err != nil {
				l.c.Log.Error("re-request cancel", "taskId", e.ID, "err", err)
			}
		}
		admitted(r.execErr)
		l.mu.Lock()
		// A retry puts the task back in the index before this runner has
		// let go, and the lane may already run it again: release only
		// what is still this runner's, or the lane would count one
		// attempt too few and start one more than its concurrency.
		if l.running[e.ID] == r {
			delete(l.running, e.ID)
		}
		again, requeue := l.deferred[e.ID]
		delete(l.deferred, e.ID)
		if cur := l.running[e.ID]; s != nil && (cur == nil || cur.sess != s) {
			s.mu.Lock()
			if s.running == e.ID {
				s.running = ""
			}
			s.mu.Unlock()
		}
		l.mu.Unlock()
		if requeue {
			l.c.Index.Put(again)
			l.Wake()
		}
		l.wg.Done()
	}
	lease, err := l.c.Store.Claim(l.c.Kind, e.ID, l.c.Owner)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			l.c.Store.Limiter().Fail("claim:"+string(l.c.Kind)+"/"+e.ID, "claim failed", err, "lane", l.c.Kind, "taskId", e.ID)
		}
		release()
		return false // another daemon took it, or it was canceled
	}
	if s != nil {
		lease.OnAccount(s.spec.Account)
	}
	go func() {
		defer l.Wake()
		defer func() {
			l.noteFinished(e.ID) // before the runner lets go: holds never sees a gap
			release()
		}()
		account := ""
		if s != nil {
			account = s.spec.Account
		}
		if t, model, ok := l.markRunning(lease, e, account); ok {
			r.init(lease, t, model)
			r.run(ctx)
		}
	}()
	return true
}

// markRunning checks a just-claimed task (on account's session, "" for
// the API lane) and marks it running through its lease (which makes the
// claim durable). When it cannot, the task is
// finished as invalid (its model left the config) or handed back, and it
// reports false.
func (l *Lane) markRunning(lease *spool.Lease, e Entry, account string) (*taskfile.Task, *config.ModelConfig, bool) {
	t, err := lease.Load()
	if err != nil {
		l.c.Store.Limiter().Fail("claimed:"+string(l.c.Kind)+"/"+e.ID, "claimed task unreadable", err, "lane", l.c.Kind, "taskId", e.ID)
		return nil, nil, false
	}
	model, ok := l.cfg().Model(t.Model)
	if !ok || model.Kind != l.c.Kind {
		o := spool.Outcome{State: taskfile.StateFailed, Class: taskfile.ClassInvalid,
			Error: fmt.Sprintf("model: %q is no longer a %s model in the config", t.Model, l.c.Kind)}
		if t, err := lease.Finish(o, time.Now()); err != nil {
			l.c.Log.Error("finish failed", "taskId", e.ID, "err", err)
		} else {
			l.c.Hooks.final(l.c.Kind, t)
		}
		return nil, nil, false
	}
	if (len(t.After) > 0 || t.FollowUp != "") && !t.Filled() && !l.fillChain(lease, t, e, account) {
		return nil, nil, false
	}
	if l.isDraining() {
		// Shutdown began while we claimed: hand it back unspent.
		if err := lease.Return(time.Time{}); err == nil {
			l.c.Index.Put(e)
		}
		return nil, nil, false
	}
	t, err = lease.Mark(time.Now())
	if err == nil && t.Account != "" {
		// The second witness (issue 20): another owner's fresh task of
		// this account in running/ means someone drives it whatever the
		// lease files say (one was renamed or deleted): hand ours back
		// unspent rather than send a second generation on one account.
		if w, busy := l.c.Store.AccountInUse(t.Account, l.c.Owner, time.Now()); busy {
			l.c.Store.Limiter().Fail("account in use:"+t.Account, "account in use by another owner: task back to pending", errors.New(w.By()), "taskId", e.ID, "account", t.Account)
			notBefore := time.Now().Add(time.Second)
			if rerr := lease.Return(notBefore); rerr == nil {
				e.NotBefore = notBefore
				l.c.Index.Put(e)
			}
			return nil, nil, false
		}
	}
	if err != nil {
		// Could not mark it (disk full?): put it back untouched, and not
		// due for a second: the round would otherwise take it again at
		// once and spin, logging this line thousands of times a second.
		l.c.Store.Limiter().Fail("mark:"+string(l.c.Kind)+"/"+e.ID, "mark running failed: back to pending", err, "lane", l.c.Kind, "taskId", e.ID)
		notBefore := time.Now().Add(time.Second)
		if rerr := lease.Return(notBefore); rerr == nil {
			e.NotBefore = notBefore
			l.c.Index.Put(e)
		}
		return nil, nil, false
	}
	return t, model, true
}
