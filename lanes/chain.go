// This file holds the lanes' part of task chains (spool/chain): a task
// whose parents have not all ended is not taken, and a claimed one is
// filled from its parents' final files, or failed naming the parent that
// failed, before anything runs.

package lanes

import (
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/chain"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// chainWaits is one round's memory of where each parent is, so that a
// parent shared by many children is looked up once a round. It reads the
// share's folders, never this daemon's memory: a parent another host ran
// counts once its final file is there.
type chainWaits map[string]taskfile.State

// mayTake reports whether e may be claimed now: every parent ended (a
// failed or canceled one too, so that the claim fails e naming it).
func (w chainWaits) mayTake(st *spool.Store, e Entry) bool {
	v := chain.Judge(e.After, func(id string) taskfile.State {
		s, ok := w[id]
		if !ok {
			_, where := st.Layout.LocateAny(id)
			s = taskfile.FolderState[where]
			w[id] = s
		}
		return s
	})
	return len(v.Waiting) == 0
}

// fillChain reads the claimed task's parents from their final files and
// fills its content from their results (the filled content is what is
// sent and recorded; Template keeps the content as submitted). A parent
// failed or canceled fails the task, naming it, and a parent not ended
// after all (retried since the round looked) hands it back. It reports
// whether the claim goes on.
func (l *Lane) fillChain(lease *spool.Lease, t *taskfile.Task, e Entry) bool {
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
		}
		return false
	case !v.Ready():
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
	return true
}
