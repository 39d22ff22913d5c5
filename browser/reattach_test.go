//go:build linux

package browser

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// reattachEnv is the modern stand-in page with standin-md's keys but the
// ones named in without (history, userMessage).
func reattachEnv(t *testing.T, without ...string) *env {
	keys := testkit.StandinMarkdownSite("x")
	keys = keys[strings.Index(keys, "    input:"):]
	var kept []string
	for _, l := range strings.SplitAfter(keys, "\n") {
		if !slices.ContainsFunc(without, func(k string) bool { return strings.HasPrefix(l, "    "+k+":") }) {
			kept = append(kept, l)
		}
	}
	keys = strings.Join(kept, "")
	return newEnv(t, envOpts{stand: chatstand.Options{Renderer: "markdown-it"}, site: "    url: %q\n" + keys})
}

// TestExecutor_Reattach covers the attempts that find an earlier send
// (spool.SendRecord) in their task: each ends with the whole answer and
// says how it delivered the prompt; only the ones that cannot find the
// conversation send again, and a send whose outcome was unknown counts as
// a possible double send.
func TestExecutor_Reattach(t *testing.T) {
	e := reattachEnv(t)
	run := func(content string, prev *taskfile.SendRecord) taskfile.Delivery {
		t.Helper()
		text, d, log := reattachRun(t, e, content, prev)
		if want := chatstand.AnswerFor(content); text != want {
			t.Fatalf("%s: result %q, want %q\nlog:\n%s", content, text, want, log)
		}
		return d
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
	e2 := reattachEnv(t, "history")
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

// TestExecutor_ReattachRefusesForeign: a send record names where the browser
// goes back to, so it is obeyed only within the site. A conversation on
// another origin (with or without a path that matches `conversation`), a
// data:, file: or javascript: URL, or a page of the site that is no
// conversation is refused before anything is requested (the other
// origin's server sees no request) and the prompt is sent again in a new
// chat.
func TestExecutor_ReattachRefusesForeign(t *testing.T) {
	e := reattachEnv(t)
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<div data-message-author-role="assistant">an answer the stand-in never gave</div>`))
	}))
	t.Cleanup(other.Close)
	for i, conv := range []string{
		other.URL + "/c/abc",
		other.URL + "/",
		"data:text/html,<div data-message-author-role=assistant>fake</div>",
		"file:///etc/hostname",
		"javascript:document.write('fake')",
		e.stand.URL() + "login",
	} {
		content := fmt.Sprintf("refused %d", i)
		text, d, log := reattachRun(t, e, content, sentTo(conv))
		if want := chatstand.AnswerFor(content); text != want {
			t.Errorf("%s: result %q, want %q\nlog:\n%s", conv, text, want, log)
		}
		if d.How != taskfile.DeliveryResent || !strings.Contains(d.Reason, "not one of the site's") {
			t.Errorf("%s: delivery %+v, want resent, refused", conv, d)
		}
		if n := e.stand.SendsOf(content); n != 1 {
			t.Errorf("%s: the stand-in received the prompt %d times, want 1", conv, n)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the other origin received %d requests, want none", n)
	}
}

// TestExecutor_ReattachLeaves: a conversation that shows our message and
// then goes to another conversation of the account while its answer is
// read gives not that conversation's answer: the prompt is sent again.
func TestExecutor_ReattachLeaves(t *testing.T) {
	e := reattachEnv(t)
	// A conversation of ours, and a private one of the account.
	leave := "an answer read while the page leaves"
	var convs []string
	for _, content := range []string{leave, "a private question"} {
		job, log := e.job(t, "chat-web", "", content)
		if _, err := e.exec.Execute(context.Background(), job); err != nil {
			t.Fatalf("%v\nlog:\n%s", err, log)
		}
		convs = append(convs, job.Task.Send.Conversation)
	}
	away := convs[0] + "?leave=" + convs[1][strings.Index(convs[1], "/c/"):]
	text, d, log2 := reattachRun(t, e, leave, sentTo(away))
	if want := chatstand.AnswerFor(leave); text != want {
		t.Errorf("redirect away: result %q, want %q (never the private conversation's)\nlog:\n%s", text, want, log2)
	}
	if d.How != taskfile.DeliveryResent || !strings.Contains(d.Reason, "went to") {
		t.Errorf("redirect away: delivery %+v, want resent: the page went elsewhere\nlog:\n%s", d, log2)
	}
	if n := e.stand.SendsOf(leave); n != 2 {
		t.Errorf("redirect away: sent %d times, want 2 (the first send, one resend)", n)
	}
}

// TestExecutor_ReattachOneLetter: without userMessage, a one-letter
// message cut off while sending is not "found" in the newest conversation
// because that conversation's text holds the letter.
func TestExecutor_ReattachOneLetter(t *testing.T) {
	private := "a private question"
	// Without userMessage, a one-letter message cut off while sending is
	// not "found" in the newest conversation because its text holds an e.
	e2 := reattachEnv(t, "userMessage")
	job, log := e2.job(t, "chat-web", "", private)
	if _, err := e2.exec.Execute(context.Background(), job); err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log)
	}
	text, d, log2 := reattachRun(t, e2, "e", &taskfile.SendRecord{State: taskfile.SendSending, Attempt: 1, SendingAt: time.Now()})
	if want := chatstand.AnswerFor("e"); text != want {
		t.Errorf("one letter: result %q, want %q\nlog:\n%s", text, want, log2)
	}
	if d.How != taskfile.DeliveryResent || e2.stand.SendsOf("e") != 1 {
		t.Errorf("one letter: delivery %+v, sent %d times: want resent once", d, e2.stand.SendsOf("e"))
	}
}

// reattachRun runs content as attempt 2 of a task whose send record is
// prev and returns its result, the attempt's delivery and the log.
func reattachRun(t *testing.T, e *env, content string, prev *taskfile.SendRecord) (string, taskfile.Delivery, string) {
	t.Helper()
	job, log := e.job(t, "chat-web", "", content)
	job.Task.Attempt, job.Task.Send = 2, prev
	res, err := e.exec.Execute(context.Background(), job)
	if err != nil {
		t.Fatalf("%s: %v\nlog:\n%s", content, err, log)
	}
	ds := job.Deliveries()
	if len(ds) == 0 {
		t.Fatalf("%s: no delivery recorded\nlog:\n%s", content, log)
	}
	return res.Text, ds[len(ds)-1], log.String()
}

// sentTo is a send record of attempt 1 that says the page took the
// message in conversation conv.
func sentTo(conv string) *taskfile.SendRecord {
	return &taskfile.SendRecord{State: taskfile.SendSent, Attempt: 1, SendingAt: time.Now(), Conversation: conv}
}
