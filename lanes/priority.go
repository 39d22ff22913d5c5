package lanes

import (
	"errors"
	"os"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// priorityRequest handles <lane>/priority/ID, left by `spoolgate priority`
// after it rewrote pending/ID: the index takes the task's new priority.
// While the task waits, the request stays, so that every daemon of a
// shared spool (each with its own index) sees it at its next rescan; once
// the task has left pending/, the request is removed.
func (d *Daemon) priorityRequest(k taskfile.Kind, id string) {
	t, err := d.Store.Read(k, taskfile.DirPending, id)
	if err == nil && t.State == taskfile.StatePending {
		if l := d.lanes[k]; l != nil && l.c.Index.Replace(EntryOf(d.cfg, t)) {
			l.Wake()
		}
		return
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		d.Store.Limiter().Fail("priority:"+d.Store.Layout.PriorityPath(k, id), "priority request: read pending task", err, "lane", k, "taskId", id)
		return
	}
	if err := os.Remove(d.Store.Layout.PriorityPath(k, id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		d.Store.Limiter().Fail("priority consume:"+d.Store.Layout.PriorityPath(k, id), "consume priority request", err, "lane", k, "taskId", id)
	}
}
