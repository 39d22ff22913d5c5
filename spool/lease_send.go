package spool

import (
	"errors"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

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
	if err := SyncDir(l.s.Layout.Lane(l.kind, taskfile.DirRunning)); err != nil {
		return err
	}
	l.task, l.wrote = t, data
	return nil
}

var errNotMarked = errors.New("write to a lease that is not marked")
