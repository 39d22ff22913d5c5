package lanes

import "github.com/spoolgate/spoolgate/spool/taskfile"

// OutputOwner returns the taskId of this lane's pending or running task
// whose output is key (a spool.OutputKey): its index for pending tasks, its
// runners (at most five) for running ones.
func (l *Lane) OutputOwner(key string) (string, bool) {
	if id, ok := l.c.Index.OutputOwner(key); ok {
		return id, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, r := range l.running {
		if r.output == key {
			return id, true
		}
	}
	return "", false
}

// outputOwner is the daemon's answer to intake's question: which pending
// or running task, in either lane, writes output key ("lane/taskId").
func (d *Daemon) outputOwner(key string) (string, bool) {
	for _, k := range taskfile.Kinds {
		if l := d.lanes[k]; l != nil {
			if id, ok := l.OutputOwner(key); ok {
				return string(k) + "/" + id, true
			}
		}
	}
	return "", false
}
