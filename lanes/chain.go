// This file holds the lanes' part of task chains and follow-ups
// (spool/chain): a task whose parents have not all ended is not taken, a
// follow-up goes to the session of the account whose chat it continues,
// and a claimed one is filled from its parents' final files, or failed
// naming the parent that failed, before anything runs.

package lanes

import (
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/chain"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// chainWaits is one round's memory of where each parent is, and of the
// account a follow-up's parent ran on, so that a parent shared by many
// children is looked up once a round. It reads the share's folders and
// records, never this daemon's memory: a parent another host ran counts
// once its final file is there.
type chainWaits struct {
	states   map[string]taskfile.State
	accounts map[string]string
	// sessions are the lane's sessions by account: a follow-up whose
	// account has none (removed from the config), or one that may not run
	// its model (another site, pinned elsewhere), goes to any session,
	// whose attempt fails it as gone or sends the transcript, rather than
	// waiting for ever.
	sessions map[string]config.WebSession
}

// mayTake reports whether e may be claimed now by account's session (""
// for the API lane): every parent ended (a failed or canceled one too, so
// that the claim fails e naming it), and a follow-up on the account whose
// chat it continues.
func (w *chainWaits) mayTake(st *spool.Store, e Entry, account string) bool {
	if w.states == nil {
		w.states, w.accounts = map[string]taskfile.State{}, map[string]string{}
	}
	v := chain.Judge(e.After, func(id string) taskfile.State {
		s, ok := w.states[id]
		if !ok {
			_, where := st.Layout.LocateAny(id)
			s = taskfile.FolderState[where]
			w.states[id] = s
		}
		return s
	})
	if len(v.Waiting) > 0 {
		return false
	}
	if e.FollowUp == "" || account == "" || v.Broken != "" {
		return true
	}
	a, ok := w.accounts[e.FollowUp]
	if !ok {
		if k, where := st.Layout.LocateAny(e.FollowUp); where == taskfile.DirDone {
			if p, err := st.Read(k, where, e.FollowUp); err == nil {
				a = taskfile.ThreadOf(p).Account
			}
		}
		w.accounts[e.FollowUp] = a
	}
	s, ok := w.sessions[a]
	return a == "" || a == account || !ok || !s.May(e.Site, e.Pinned)
}

// fillChain reads the claimed task's parents from their final files and
// fills its content from their results (the filled content is what is
// sent and recorded; Template keeps the content as submitted), and a
// follow-up's thread from its parent's record. A parent failed or
// canceled fails the task, naming it; a parent not ended after all
// (retried since the round looked), or a follow-up claimed by another
// account's session, hands it back. It reports whether the claim goes on.
func (l *Lane) fillChain(lease *spool.Lease, t *taskfile.Task, e Entry, account string) bool {
	done := map[string]*taskfile.Task{}
	forged := ""
	v := chain.Judge(chain.Parents(t), func(id string) taskfile.State {
		k, where := l.c.Store.Layout.LocateAny(id)
		s := taskfile.FolderState[where]
		if s != taskfile.StateSuccess {
			return s
		}
		p, err := l.c.Store.Read(k, where, id)
		switch {
		case err != nil:
			return "" // gone meanwhile (a retry, retention): wait
		case p.State != taskfile.StateSuccess:
			// Its seal failed: a record in done/ no daemon of ours wrote
			// lends no result to a chain.
			forged = id
			return taskfile.StateFailed
		}
		done[id] = p
		return s
	})
	var th *taskfile.Thread
	if p := done[t.FollowUp]; p != nil {
		th = taskfile.ThreadOf(p)
	}
	switch {
	case v.Broken != "":
		why := v.Reason()
		if v.Broken == forged {
			why = "parent " + forged + ": its record in done/ was not written by a daemon of this installation, so its result is not used"
		}
		o := spool.Outcome{State: taskfile.StateFailed, Class: taskfile.ClassParent, Error: why}
		if ft, err := lease.Finish(o, time.Now()); err != nil {
			l.c.Log.Error("finish failed", "taskId", e.ID, "err", err)
		} else {
			l.c.Hooks.final(l.c.Kind, ft)
			// The parent's log names the child: its retry re-queues it.
			if pk, _ := l.c.Store.Layout.LocateAny(v.Broken); pk != "" {
				_ = l.c.Store.AppendLog(pk, v.Broken, spool.ChildFailedLog+string(l.c.Kind)+"/"+e.ID+" failed for this task: retrying this task re-queues it")
			}
		}
		return false
	case !v.Ready(), th != nil && account != "" && th.Account != account && l.routable(th.Account, e):
		notBefore := time.Now().Add(time.Second)
		if err := lease.Return(notBefore); err == nil {
			e.NotBefore = notBefore
			l.c.Index.Put(e)
		}
		return false
	}
	// t is the lease's own copy, read from running/ by this claim; Mark
	// writes it as it stands.
	if filled := chain.Fill(t.Content, done); filled != t.Content {
		t.Template, t.Content = t.Content, filled
	}
	t.Thread = th
	return true
}

// sessionAccounts are the lane's sessions by account.
func (l *Lane) sessionAccounts() map[string]config.WebSession {
	m := map[string]config.WebSession{}
	for _, s := range l.sessions {
		m[s.spec.Account] = s.spec
	}
	return m
}

// routable reports whether follow-up e, of the chat of account, waits
// for that account's session: it has one, and it may run e's model.
func (l *Lane) routable(account string, e Entry) bool {
	s, ok := l.sessionAccounts()[account]
	return ok && s.May(e.Site, e.Pinned)
}
