package spool

import (
	"io"
	"path/filepath"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// appendTaskLog appends data to <lane>/logs/ID.log, opened by an openat
// walk from the spool root: no symlink is followed on the way or at the
// file, a fifo or any other special file is refused without blocking.
func (s *Store) appendTaskLog(k taskfile.Kind, id string, data []byte) error {
	return appendBeneath(s.Layout.Root, filepath.Join(string(k), taskfile.DirLogs, id+".log"), data)
}

// TaskLog returns the writer of lane k's log of task id. Each Write
// appends (the file is opened each time: a task log gets a handful of
// lines per attempt, and a closed file survives a crash whole). A log that
// cannot be written safely never stops the attempt: the write reports
// success to its caller, and the problem is logged on the daemon's log
// once per task (not once per line).
func (s *Store) TaskLog(k taskfile.Kind, id string) io.Writer { return &taskLog{s: s, k: k, id: id} }

type taskLog struct {
	s  *Store
	k  taskfile.Kind
	id string
}

func (w *taskLog) Write(p []byte) (int, error) {
	if err := w.s.appendTaskLog(w.k, w.id, p); err != nil {
		if w.s.guard.tellOnce("log:" + string(w.k) + "/" + w.id) {
			w.s.Log.Error("task log not written: the task goes on without it", "lane", w.k, "taskId", w.id, "err", err)
		}
	}
	return len(p), nil
}
