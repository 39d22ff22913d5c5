package spool

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func taskLogRel(k taskfile.Kind, id string) string {
	return filepath.Join(string(k), taskfile.DirLogs, id+".log")
}

// appendTaskLog appends data to <lane>/logs/ID.log, opened by an openat
// walk from the spool root: no symlink is followed on the way or at the
// file, a fifo or any other special file is refused without blocking.
func (s *Store) appendTaskLog(k taskfile.Kind, id string, data []byte) error {
	return fsx.AppendBeneath(s.Layout.Root, taskLogRel(k, id), data)
}

// TaskLog returns the writer of lane k's log of task id. Its first Write
// opens the file (as appendTaskLog does) and keeps it open until Close: an
// attempt writes a few lines, and each open is a walk from the spool root
// (four opens and an fstat; with the file's create, the task log was 14 %
// of a task's work in the spool core's profile, opened for each line). Written
// lines are in the kernel at once, so a crash of the daemon loses none. A
// Write after Close appends its line alone (an executor's goroutine may
// log after its attempt ended). A log that cannot be written safely never
// stops the attempt: the write reports success to its caller, and the
// problem is logged on the daemon's log once per task (not once per line).
func (s *Store) TaskLog(k taskfile.Kind, id string) *TaskLog {
	return &TaskLog{s: s, k: k, id: id}
}

// TaskLog is one task's log file, open while its attempt runs.
type TaskLog struct {
	s  *Store
	k  taskfile.Kind
	id string

	mu     sync.Mutex
	f      *os.File // nil: not open (yet, or any more)
	closed bool
}

func (w *TaskLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if w.closed {
		err = w.s.appendTaskLog(w.k, w.id, p)
	} else {
		if w.f == nil {
			w.f, err = fsx.OpenAppendBeneath(w.s.Layout.Root, taskLogRel(w.k, w.id))
		}
		if err == nil {
			if _, err = w.f.Write(p); err != nil {
				w.f.Close() // the next line opens it again
			}
		}
		if err != nil {
			w.f = nil
		}
	}
	if err != nil && w.s.guard.tellOnce("log:"+string(w.k)+"/"+w.id) {
		w.s.Log.Error("task log not written: the task goes on without it", "lane", w.k, "taskId", w.id, "err", err)
	}
	return len(p), nil
}

// Close closes the file; later Writes append a line each. It is safe to
// call more than once.
func (w *TaskLog) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}
