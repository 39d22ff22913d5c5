//go:build linux

package browser

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// reattachEnv is the modern stand-in page with standin-md's keys; without
// history, the site names no history list.
func reattachEnv(t *testing.T, history bool) *env {
	keys := testkit.StandinMarkdownSite("x")
	keys = keys[strings.Index(keys, "    input:"):]
	if !history {
		var kept []string
		for _, l := range strings.SplitAfter(keys, "\n") {
			if !strings.HasPrefix(l, "    history:") {
				kept = append(kept, l)
			}
		}
		keys = strings.Join(kept, "")
	}
	return newEnv(t, envOpts{stand: chatstand.Options{Renderer: "markdown-it"}, site: "    url: %q\n" + keys})
}

// TestExecutor_Reattach covers the attempts that find an earlier send
// (spool.SendRecord) in their task: each ends with the whole answer and
// says how it delivered the prompt; only the ones that cannot find the
// conversation send again, and a send whose outcome was unknown counts as
// a possible double send.
func TestExecutor_Reattach(t *testing.T) {
	e := reattachEnv(t, true)
	run := func(content string, prev *taskfile.SendRecord) taskfile.Delivery {
		t.Helper()
		job, log := e.job(t, "chat-web", "", content)
		job.Task.Attempt, job.Task.Send = 2, prev
		res, err := e.exec.Execute(context.Background(), job)
		if err != nil {
			t.Fatalf("%s: %v\nlog:\n%s", content, err, log)
		}
		if want := chatstand.AnswerFor(content); res.Text != want {
			t.Fatalf("%s: result %q, want %q\nlog:\n%s", content, res.Text, want, log)
		}
		ds := job.Deliveries()
		if len(ds) == 0 {
			t.Fatalf("%s: no delivery recorded\nlog:\n%s", content, log)
		}
		return ds[len(ds)-1]
	}
	// A first send records its conversation.
	first := "the first message"
	job, log := e.job(t, "chat-web", "", first)
	if _, err := e.exec.Execute(context.Background(), job); err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log)
	}
	sent := job.Task.Send
	if sent == nil || sent.State != taskfile.SendSent || !strings.Contains(sent.Conversation, "/c/") || sent.SentAt.Before(sent.SendingAt) {
		t.Fatalf("send record %+v: want sent with the /c/ID conversation", sent)
	}

	cases := []struct {
		name, content string
		prev          taskfile.SendRecord
		how           taskfile.DeliveryHow
		double        bool
		reason        string
		sends         int
	}{
		{"sent: reattached", first, *sent, taskfile.DeliveryReattached, false, "", 1},
		{"sending, found in the history", first, taskfile.SendRecord{State: taskfile.SendSending, Attempt: 1, SendingAt: time.Now()},
			taskfile.DeliveryReattached, false, "newest conversation of the history", 1},
		{"sending, not in the history", "a message never sent", taskfile.SendRecord{State: taskfile.SendSending, Attempt: 1, SendingAt: time.Now()},
			taskfile.DeliveryResent, true, "does not show our message", 1},
		{"another account's conversation", "sent on another account", taskfile.SendRecord{State: taskfile.SendSent, Attempt: 1, Account: "other", Conversation: sent.Conversation},
			taskfile.DeliveryResent, false, "account other", 1},
	}
	for _, c := range cases {
		d := run(c.content, &c.prev)
		if d.How != c.how || d.PossibleDoubleSend != c.double || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("%s: delivery %+v, want %s (possible double %v) with a reason naming %q", c.name, d, c.how, c.double, c.reason)
		}
		if n := e.stand.SendsOf(c.content); n != c.sends {
			t.Errorf("%s: the stand-in received %q %d times, want %d", c.name, c.content, n, c.sends)
		}
	}

	// A conversation whose answer is the site's error turn: sent again
	// in a new chat (its Retry button never pressed).
	bad := "[[errorturn]] a turn that fails"
	job, log = e.job(t, "chat-web", "", bad)
	if _, err := e.exec.Execute(context.Background(), job); err == nil {
		t.Fatalf("the error turn was taken as an answer\nlog:\n%s", log)
	}
	failed := job.Task.Send
	job, log = e.job(t, "chat-web", "", bad)
	job.Task.Attempt, job.Task.Send = 2, failed
	if _, err := e.exec.Execute(context.Background(), job); err == nil {
		t.Fatalf("the resent error turn was taken as an answer\nlog:\n%s", log)
	}
	ds := job.Deliveries()
	if d := ds[len(ds)-1]; failed == nil || d.How != taskfile.DeliveryResent || !strings.Contains(d.Reason, "error turn") || d.PossibleDoubleSend {
		t.Errorf("error turn: send %+v, delivery %+v: want resent because of the error turn\nlog:\n%s", failed, d, log)
	}
	if n := e.stand.SendsOf(bad); n != 2 {
		t.Errorf("error turn: sent %d times, want 2 (the first, one resend; never Retry)", n)
	}

	// A site that names no history cannot look: it sends again and
	// counts a possible double send.
	e2 := reattachEnv(t, false)
	job, log = e2.job(t, "chat-web", "", "no history to look in")
	job.Task.Attempt, job.Task.Send = 2, &taskfile.SendRecord{State: taskfile.SendSending, Attempt: 1, SendingAt: time.Now()}
	if _, err := e2.exec.Execute(context.Background(), job); err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log)
	}
	ds = job.Deliveries()
	if d := ds[len(ds)-1]; d.How != taskfile.DeliveryResent || !d.PossibleDoubleSend || !strings.Contains(d.Reason, "names no `history`") {
		t.Errorf("no history: delivery %+v, want resent, possible double send", d)
	}
}
