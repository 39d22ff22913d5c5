package lanes

import (
	"context"
	"errors"
	"log/slog"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// teeHandler sends each record to two handlers: the lane's log and the
// task's own log file.
type teeHandler struct{ a, b slog.Handler }

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return t.a.Enabled(ctx, l) || t.b.Enabled(ctx, l)
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	if t.a.Enabled(ctx, r.Level) {
		errs = append(errs, t.a.Handle(ctx, r.Clone()))
	}
	if t.b.Enabled(ctx, r.Level) {
		errs = append(errs, t.b.Handle(ctx, r.Clone()))
	}
	return errors.Join(errs...)
}

func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{t.a.WithAttrs(as), t.b.WithAttrs(as)}
}

func (t teeHandler) WithGroup(n string) slog.Handler {
	return teeHandler{t.a.WithGroup(n), t.b.WithGroup(n)}
}

// newTaskLogHandler writes to w, a task's <lane>/logs/TASKID.log: every
// attempt of one task, self-check included, at debug level and up. A log
// that cannot be written safely (a symlink, a fifo) never stalls the
// attempt: see spool.Store.TaskLog.
func newTaskLogHandler(w *spool.TaskLog) slog.Handler {
	return slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})
}

// TaskLogger returns a logger that writes to both log and the task's log
// file; the daemon uses it for events outside an attempt (reclaim, cancel).
// Its log is closed from the start: each of its few lines opens the file
// for itself, so nothing is left open for a logger nobody closes.
func TaskLogger(log *slog.Logger, s *spool.Store, k taskfile.Kind, id string) *slog.Logger {
	w := s.TaskLog(k, id)
	w.Close()
	return slog.New(teeHandler{a: log.With("taskId", id).Handler(), b: newTaskLogHandler(w)})
}
