package spool

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestLease_RecordSend: the send's steps are durable, fenced rewrites of
// the running file that a concurrent heartbeat never undoes; a retry
// finds them after a reclaim, and the final record keeps them.
func TestLease_RecordSend(t *testing.T) {
	s := newTestStore(t)
	accept(t, s, "r")
	l, _ := s.Claim(taskfile.KindAPI, "r", "h:1")
	t0 := time.Now().UTC()
	if err := l.RecordSend(&taskfile.SendRecord{State: taskfile.SendSending}, nil); err == nil {
		t.Fatal("RecordSend before Mark: want an error")
	}
	if _, err := l.Mark(t0); err != nil {
		t.Fatal(err)
	}
	// Heartbeats race with the send's records: none may be lost.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := l.Beat(t0.Add(time.Duration(i)*time.Millisecond), 0); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	rec := taskfile.SendRecord{State: taskfile.SendSending, Attempt: 1, Account: "demo", SendingAt: t0}
	if err := l.RecordSend(&rec, &taskfile.Delivery{Attempt: 1, How: taskfile.DeliverySent, Account: "demo"}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, s, taskfile.DirRunning, "r"); got.Send == nil || got.Send.State != taskfile.SendSending || len(got.Attempts) != 1 || got.Attempts[0].Delivery != taskfile.DeliverySent {
		t.Fatalf("after sending: send %+v attempts %+v", got.Send, got.Attempts)
	}
	rec.State, rec.SentAt, rec.Conversation = taskfile.SendSent, t0.Add(time.Second), "http://127.0.0.1:1/c/abc"
	if err := l.RecordSend(&rec, &taskfile.Delivery{Attempt: 1, How: taskfile.DeliverySent, Account: "demo", Conversation: rec.Conversation}); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	got := mustRead(t, s, taskfile.DirRunning, "r")
	if got.Send == nil || got.Send.State != taskfile.SendSent || got.Send.Conversation != rec.Conversation || !got.Send.SentAt.Equal(rec.SentAt.Truncate(time.Millisecond)) {
		t.Fatalf("after sent: %+v", got.Send)
	}
	if len(got.Attempts) != 1 || got.Attempts[0].Conversation != rec.Conversation {
		t.Fatalf("attempts: %+v, want attempt 1's record with the conversation", got.Attempts)
	}

	// Reclaimed (the daemon died) and claimed again: attempt 2 sees the
	// record, and its own record comes after attempt 1's.
	if err := s.move(taskfile.KindAPI, taskfile.DirRunning, taskfile.DirPending, "r"); err != nil {
		t.Fatal(err)
	}
	l2, _ := s.Claim(taskfile.KindAPI, "r", "h:2")
	m, err := l2.Mark(t0.Add(2 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if m.Attempt != 2 || m.Send == nil || m.Send.Conversation != rec.Conversation {
		t.Fatalf("attempt 2 marked: attempt %d send %+v", m.Attempt, m.Send)
	}
	if err := l.RecordSend(&taskfile.SendRecord{State: taskfile.SendSending, Attempt: 1}, nil); !errors.Is(err, ErrFenced) {
		t.Fatalf("the old lease's RecordSend: %v, want ErrFenced", err)
	}
	if err := l2.RecordSend(nil, &taskfile.Delivery{Attempt: 2, How: taskfile.DeliveryReattached, Conversation: rec.Conversation}); err != nil {
		t.Fatal(err)
	}
	done, err := l2.Finish(Outcome{State: taskfile.StateSuccess, Result: "answer"}, t0.Add(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	final := mustRead(t, s, taskfile.DirDone, "r")
	if final.Send == nil || final.Send.Conversation != rec.Conversation || len(final.Attempts) != 2 || final.Attempts[0].Delivery != taskfile.DeliverySent ||
		final.Attempts[1].Delivery != taskfile.DeliveryReattached || len(done.Attempts) != 2 || final.LastDelivery().N != 2 {
		t.Fatalf("final: send %+v attempts %+v", final.Send, final.Attempts)
	}
	// A retry by hand runs it as new: the record goes with the rest.
	final.ResetForIntake()
	if final.Send != nil || final.Attempts != nil {
		t.Fatalf("ResetForIntake kept send %+v attempts %+v", final.Send, final.Attempts)
	}
}

// TestStore_ForeignSendRecord: a task file's daemon-written fields are
// acted on only as a daemon of this installation sealed them for that
// task. A send record planted unsealed, one copied from another task's
// sealed file, one added to a sealed task, and a sealed record whose
// content was edited are all dropped at the claim: the task runs fresh,
// logged once in its log; the genuine record is kept.
func TestStore_ForeignSendRecord(t *testing.T) {
	s := newTestStore(t)
	now := time.Now().UTC()
	rec := func(conv string) *taskfile.SendRecord {
		return &taskfile.SendRecord{State: taskfile.SendSent, Attempt: 1, Account: "default", SendingAt: now, SentAt: now, Conversation: conv}
	}
	task := func(id string) *taskfile.Task {
		return &taskfile.Task{TaskID: id, ModelKind: taskfile.KindWeb, Model: "chat", Content: "hello " + id, State: taskfile.StatePending,
			Attempt: 1, SubmittedAt: now, Result: "old", Attempts: []taskfile.AttemptRecord{{N: 1, ClaimedAt: now, Outcome: taskfile.AttemptRetried}}}
	}
	write := func(id string, data []byte) {
		if err := fsx.WriteFileAtomic(s.Layout.TaskPath(taskfile.KindWeb, taskfile.DirPending, id), data); err != nil {
			t.Fatal(err)
		}
	}
	// genuine: sealed by this installation for this task.
	g := task("genuine")
	g.Send = rec("http://127.0.0.1:1/c/genuine")
	if err := putTask(s, taskfile.KindWeb, taskfile.DirPending, g); err != nil {
		t.Fatal(err)
	}
	// unsealed: written by hand.
	u := task("unsealed")
	u.Send = rec("http://127.0.0.1:2/evil")
	data, _ := u.Encode()
	write("unsealed", data)
	// copied: another task's sealed file under this task's name.
	genuine, err := os.ReadFile(s.Layout.TaskPath(taskfile.KindWeb, taskfile.DirPending, "genuine"))
	if err != nil {
		t.Fatal(err)
	}
	write("copied", genuine)
	// added: a record added to a sealed task (the seal line kept).
	a := task("added")
	if err := putTask(s, taskfile.KindWeb, taskfile.DirPending, a); err != nil {
		t.Fatal(err)
	}
	sealed, _ := os.ReadFile(s.Layout.TaskPath(taskfile.KindWeb, taskfile.DirPending, "added"))
	write("added", bytes.Replace(sealed, []byte("attempts:"), []byte("send:\n  state: sent\n  attempt: 1\n  account: default\n  sendingAt: 2026-01-01T00:00:00Z\n  conversation: data:text/html,x\nattempts:"), 1))
	// edited: a sealed record whose content a colleague changed.
	e := task("edited")
	e.Send = rec("http://127.0.0.1:1/c/edited")
	if err := putTask(s, taskfile.KindWeb, taskfile.DirPending, e); err != nil {
		t.Fatal(err)
	}
	sealed, _ = os.ReadFile(s.Layout.TaskPath(taskfile.KindWeb, taskfile.DirPending, "edited"))
	write("edited", bytes.Replace(sealed, []byte("hello edited"), []byte("hello again"), 1))

	for _, id := range []string{"genuine", "unsealed", "copied", "added", "edited"} {
		l, err := s.Claim(taskfile.KindWeb, id, "h:1")
		if err != nil {
			t.Fatal(err)
		}
		m, err := l.Mark(now)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		logged := strings.Contains(readLog(t, s, id), "foreign record")
		if id == "genuine" {
			if m.Send == nil || m.Send.Conversation != g.Send.Conversation || m.Attempt != 2 || m.Result != "old" || logged {
				t.Errorf("genuine: send %+v attempt %d result %q logged %v, want its record kept", m.Send, m.Attempt, m.Result, logged)
			}
			continue
		}
		if m.Send != nil || m.Attempt != 1 || m.Result != "" || len(m.Attempts) != 1 || !m.SubmittedAt.Equal(now.Truncate(time.Millisecond)) || !logged {
			t.Errorf("%s: send %+v attempt %d result %q attempts %d submitted %v logged %v, want a fresh task, logged", id, m.Send, m.Attempt, m.Result, len(m.Attempts), m.SubmittedAt, logged)
		}
	}
}

func readLog(t *testing.T, s *Store, id string) string {
	t.Helper()
	data, err := os.ReadFile(s.Layout.LogPath(taskfile.KindWeb, id))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}
