package spool

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/chain"
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

// ChildFailedLog is the line a lane appends to a parent's task log when
// it fails a child of its chain for it: "chain: child LANE/ID failed
// for this task". retryChildren reads it back.
const ChildFailedLog = "chain: child "

// retryChildren retries, with a parent of a chain, the tasks that failed
// because it had, and theirs in turn: retrying a parent lets its children
// run. The parent's log names them (ChildFailedLog), so a retry reads one
// log, never every failed task; each one named is retried only if its
// record says so (errorClass parent, waiting for this parent), so a line
// planted in a log re-queues nothing. Each is moved as Retry moves it,
// after its parent, so intake finds the parent among the drops.
func (s *Store) retryChildren(k taskfile.Kind, parent string) {
	type task struct {
		k  taskfile.Kind
		id string
	}
	for queue := []task{{k, parent}}; len(queue) > 0; queue = queue[1:] {
		p := queue[0]
		log, _, err := fsx.ReadRegular(s.Layout.LogPath(p.k, p.id), taskfile.MaxRecordSize)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(log), "\n") {
			_, rest, ok := strings.Cut(line, " "+ChildFailedLog)
			ref, _, _ := strings.Cut(rest, " ")
			lane, id, _ := strings.Cut(ref, "/")
			ck := taskfile.Kind(lane)
			if !ok || !ck.Valid() || !taskfile.ValidTaskID(id) {
				continue
			}
			t, err := s.Read(ck, taskfile.DirFailed, id)
			if err != nil || t.ErrorClass != taskfile.ClassParent || !slices.Contains(chain.Parents(t), p.id) {
				continue
			}
			if _, err := s.Retryable(ck, id); err != nil {
				continue
			}
			if err := s.files.RenameNoReplace(s.Layout.TaskPath(ck, taskfile.DirFailed, id), s.Layout.TaskPath(ck, taskfile.DirIncoming, id)); err != nil {
				continue
			}
			_ = s.AppendLog(ck, id, retriedWithParent+p.id+": moved from failed/ back to incoming/")
			queue = append(queue, task{ck, id})
		}
	}
}

// retriedWithParent starts the log line retryChildren writes.
const retriedWithParent = "retried with its parent "

// requeuedWithParent reports whether lane k's task id waits in incoming/
// because its parent's retry moved it there: the last line of its log
// says so.
func (s *Store) requeuedWithParent(k taskfile.Kind, id string) bool {
	if !exists(s.Layout.TaskPath(k, taskfile.DirIncoming, id)) {
		return false
	}
	log, _, err := fsx.ReadRegular(s.Layout.LogPath(k, id), taskfile.MaxRecordSize)
	lines := strings.Split(strings.TrimRight(string(log), "\n"), "\n")
	return err == nil && strings.Contains(lines[len(lines)-1], " "+retriedWithParent)
}
