package lanes

import (
	"context"
	"errors"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// recordSend writes a web attempt's send record and delivery line through
// the task's lease (see Job.RecordSend) and says in the task's log what
// the attempt did with the prompt. A fenced write stops the attempt: the
// task is another daemon's, and this one must send nothing.
func (r *runner) recordSend(cancel context.CancelCauseFunc, rec *taskfile.SendRecord, d *taskfile.Delivery) error {
	err := r.lease.RecordSend(rec, d)
	switch {
	case errors.Is(err, spool.ErrFenced):
		r.log.Warn("task taken over by another daemon: stopping before the send", "err", err)
		cancel(attempt.ErrFenced)
		return err
	case err != nil:
		r.log.Error("cannot record the send in the task file: nothing is sent", "err", err)
		return attempt.Errorf(taskfile.ClassTransient, "record the send: %w", err)
	}
	r.recordPaceSend(rec)
	if rec != nil {
		switch rec.State {
		case taskfile.SendSending:
			r.log.Info("send recorded: sending", "account", rec.Account)
		case taskfile.SendSent:
			r.log.Info("send recorded: sent", "conversation", rec.Conversation)
		}
	}
	if d != nil && d.How != r.delivered {
		// Once per attempt and way: the sending and the sent record of
		// one send carry the same line.
		r.delivered = d.How
		args := []any{"how", d.How, "conversation", d.Conversation}
		if d.Reason != "" {
			args = append(args, "reason", d.Reason)
		}
		if d.PossibleDoubleSend {
			args = append(args, "possibleDoubleSend", true)
		}
		r.log.Info("delivery: "+string(d.How), args...)
		if r.l.c.Hooks.OnDelivery != nil {
			r.l.c.Hooks.OnDelivery(r.l.c.Kind, r.lease.Task().Clone(), *d)
		}
	}
	return nil
}
