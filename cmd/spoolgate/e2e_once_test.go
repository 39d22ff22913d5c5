//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 21's acceptance through `spoolgate run`, real headless Chromium
// against the modern stand-in page (conversations at /c/ID generated on
// the server whether or not a page listens): a web prompt is sent once.
// The daemon is SIGKILLed at points from before the send to after the
// answer, restarted, and each task must end success with the whole answer
// and the stand-in must have received its text exactly once.

// onceKeys are the stand-in's keys (standin-md) plus the conversation keys.
func onceKeys() string {
	keys := testkit.StandinMarkdownSite("x")
	return keys[strings.Index(keys, "    input:"):] + `    conversation: "/c/[^/?#]+"
    userMessage: "[data-message-author-role='user']"
    history: "nav[aria-label='Chat history'] a[href^='/c/']"
    notFound: "[role=alert].not-found"
`
}

// onceRig is one stand-in site "md", its spool and signed-in profile.
func onceRig(t *testing.T, scale float64) (*e2eSites, *chatstand.Server) {
	rig := e2eNewSites(t, e2eOpts{TaskTimeout: 2 * time.Minute, MaxRetries: 3}, scale,
		&e2eSite{name: "md", opts: chatstand.Options{Renderer: "markdown-it"}, keys: onceKeys()})
	return rig, rig.sites["md"].stand
}

// onceDaemon is a `spoolgate run` of the rig that the test may SIGKILL.
type onceDaemon struct {
	*e2eDaemon
	name string
}

func onceStart(r *e2eSites, name string) onceDaemon {
	r.t.Helper()
	return onceDaemon{r.start(), name}
}

// kill SIGKILLs the daemon (its browser is left behind, as after a real
// crash: the next daemon's self-check kills it) and waits for it; its log
// is kept as NAME.stderr, since the next daemon's start truncates
// daemon.stderr.
func (d onceDaemon) kill() {
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
	kept := filepath.Join(filepath.Dir(d.stderr), d.name+".stderr")
	if os.Rename(d.stderr, kept) == nil {
		d.stderr = kept
	}
}

// convOf is the stand-in conversation id of a recorded URL.
func convOf(url string) string {
	i := strings.LastIndex(url, "/c/")
	if i < 0 {
		return ""
	}
	id := url[i+3:]
	if j := strings.IndexAny(id, "?#/"); j >= 0 {
		id = id[:j]
	}
	return id
}

// deliveries is the attempts' delivery column, "1 sent, 2 reattached".
func deliveries(t *taskfile.Task) string {
	var out []string
	for _, a := range t.Attempts {
		if a.Delivery != "" {
			s := fmt.Sprintf("%d %s", a.N, a.Delivery)
			if a.PossibleDoubleSend {
				s += " (possible double)"
			}
			out = append(out, s)
		}
	}
	return strings.Join(out, ", ")
}

// killPoint is when a run SIGKILLs the daemon.
type killPoint struct {
	name string
	// wait blocks until the point is reached; it reports false when the
	// task finished first (the kill then comes after the end).
	wait func(r *e2eSites, stand *chatstand.Server, id, content string, dur time.Duration) bool
}

// untilLog waits for s in the task's log.
func untilLog(s string) func(r *e2eSites, _ *chatstand.Server, id, _ string, _ time.Duration) bool {
	return func(r *e2eSites, _ *chatstand.Server, id, _ string, _ time.Duration) bool {
		e2eWait(r.t, id+"'s log to say "+s, 60*time.Second, func() bool { return strings.Contains(r.taskLog(taskfile.KindWeb, id), s) })
		return true
	}
}

// untilSend waits for the running file's send record to reach state.
func untilSend(state taskfile.SendState) func(r *e2eSites, _ *chatstand.Server, id, _ string, _ time.Duration) bool {
	return func(r *e2eSites, _ *chatstand.Server, id, _ string, _ time.Duration) bool {
		r.running(taskfile.KindWeb, id, 60*time.Second, func(t *taskfile.Task) bool { return t.Send != nil && t.Send.State == state })
		return true
	}
}

// untilTurn waits until the stand-in's answer to content satisfies cond.
func untilTurn(what string, cond func(tn chatstand.Turn, since time.Duration, dur time.Duration) bool) func(r *e2eSites, stand *chatstand.Server, id, content string, dur time.Duration) bool {
	return func(r *e2eSites, stand *chatstand.Server, id, content string, dur time.Duration) bool {
		var first time.Time
		e2eWait(r.t, id+": "+what, 2*dur+60*time.Second, func() bool {
			for _, c := range stand.Conversations("") {
				for _, tn := range c.Turns {
					if tn.Content != content {
						continue
					}
					if first.IsZero() {
						first = time.Now()
					}
					if cond(tn, time.Since(first), dur) {
						return true
					}
				}
			}
			return false
		})
		return r.L.Locate(taskfile.KindWeb, id) == taskfile.DirRunning
	}
}

var killPoints = []killPoint{
	{"claimed, before the browser", func(r *e2eSites, _ *chatstand.Server, id, _ string, _ time.Duration) bool {
		r.running(taskfile.KindWeb, id, 60*time.Second, func(t *taskfile.Task) bool { return t.Attempt == 1 })
		return true
	}},
	{"page loaded", untilLog("driver: page loaded")},
	{"text typed, not sent", untilLog("driver: text typed")},
	{"send recorded: sending", untilSend(taskfile.SendSending)},
	{"send recorded: sent", untilSend(taskfile.SendSent)},
	{"first token", untilTurn("the first token", func(tn chatstand.Turn, _, _ time.Duration) bool { return tn.Answer != "" })},
	{"40% of the answer", untilTurn("40% of the answer", func(_ chatstand.Turn, since, dur time.Duration) bool { return since >= dur*2/5 })},
	{"75% of the answer", untilTurn("75% of the answer", func(_ chatstand.Turn, since, dur time.Duration) bool { return since >= dur*3/4 })},
	{"answer done on the server", untilTurn("the answer's end", func(tn chatstand.Turn, _, _ time.Duration) bool { return tn.State == chatstand.TurnDone })},
	{"answer done + 500 ms", func(r *e2eSites, stand *chatstand.Server, id, content string, dur time.Duration) bool {
		untilTurn("the answer's end", func(tn chatstand.Turn, _, _ time.Duration) bool { return tn.State == chatstand.TurnDone })(r, stand, id, content, dur)
		deadline := time.Now().Add(500 * time.Millisecond)
		e2eWait(r.t, "500 ms after the answer's end", time.Second, func() bool { return !time.Now().Before(deadline) })
		return r.L.Locate(taskfile.KindWeb, id) == taskfile.DirRunning
	}},
}

// onceRun is one kill: submit, kill at the point, restart, collect.
type onceRun struct {
	point, deliveries, result string
	sends                     int
	took                      time.Duration
	finishedFirst             bool
}

func runKillPoint(t *testing.T, r *e2eSites, stand *chatstand.Server, n int, kp killPoint, answer time.Duration, scale float64) onceRun {
	t.Helper()
	id := fmt.Sprintf("k%02d", n)
	content := fmt.Sprintf("[[duration=%s]] kill point %d: %s", answer, n, kp.name)
	d := onceStart(r, id+"-first")
	r.submit(e2eTask{ID: id, Model: "md", Content: content})
	start := time.Now()
	reached := kp.wait(r, stand, id, content, time.Duration(float64(answer)*scale))
	d.kill()
	d2 := onceStart(r, id+"-second")
	got := r.final(taskfile.KindWeb, id, 3*time.Minute)
	d2.stop()
	run := onceRun{point: kp.name, deliveries: deliveries(got), sends: stand.SendsOf(content), took: time.Since(start), finishedFirst: !reached}
	want := chatstand.AnswerFor(content)
	if got.State != taskfile.StateSuccess || got.Result != want {
		t.Errorf("%s (%s): state %s error %q result %q, want success with %q\nlog:\n%s", id, kp.name, got.State, got.Error, got.Result, want, e2eTail(r.taskLog(taskfile.KindWeb, id), 40))
	}
	if run.sends != 1 {
		t.Errorf("%s (%s): the stand-in received the text %d times, want once (deliveries: %s)\nlog:\n%s", id, kp.name, run.sends, run.deliveries, e2eTail(r.taskLog(taskfile.KindWeb, id), 40))
	}
	run.result = "success"
	if got.State != taskfile.StateSuccess {
		run.result = string(got.State)
	}
	return run
}

// TestE2E_Web_ReattachAfterKill is the headline: a 20 s answer
// (real time), the daemon SIGKILLed 8 s into it and restarted: success
// with the whole answer, sent once, the second attempt reattached.
func TestE2E_Web_ReattachAfterKill(t *testing.T) {
	r, stand := onceRig(t, 1)
	content := "[[duration=20s]] a twenty-second answer, killed at eight"
	d := onceStart(r, "first")
	r.submit(e2eTask{ID: "long", Model: "md", Content: content})
	sent := r.running(taskfile.KindWeb, "long", 60*time.Second, func(t *taskfile.Task) bool {
		return t.Send != nil && t.Send.State == taskfile.SendSent && t.Send.Conversation != ""
	})
	at := sent.Send.SentAt.Add(8 * time.Second)
	e2eWait(t, "8 s into the answer", 30*time.Second, func() bool { return !time.Now().Before(at) })
	c, ok := stand.Conversation(convOf(sent.Send.Conversation))
	if !ok || len(c.Turns) != 1 || c.Turns[0].State != chatstand.TurnStreaming {
		t.Fatalf("at 8 s the conversation is %+v (found %v), want one turn still streaming", c, ok)
	}
	killedWith := len(c.Turns[0].Answer)
	d.kill()
	d2 := onceStart(r, "second")
	got := r.final(taskfile.KindWeb, "long", 2*time.Minute)
	d2.stop()
	log := r.taskLog(taskfile.KindWeb, "long")
	if want := chatstand.AnswerFor(content); got.State != taskfile.StateSuccess || got.Result != want {
		t.Fatalf("state %s error %q result %q, want success with %q\nlog:\n%s", got.State, got.Error, got.Result, want, e2eTail(log, 40))
	}
	if n := stand.SendsOf(content); n != 1 {
		t.Fatalf("the stand-in received the prompt %d times, want once", n)
	}
	last := got.LastDelivery()
	if last == nil || last.N != 2 || last.Delivery != taskfile.DeliveryReattached || last.Conversation != sent.Send.Conversation {
		t.Fatalf("attempts %+v: want attempt 2 reattached to %s", got.Attempts, sent.Send.Conversation)
	}
	for _, s := range []string{"delivery: sent", "delivery: reattached", "driver: reattached"} {
		if !strings.Contains(log, s) {
			t.Errorf("task log lacks %q:\n%s", s, log)
		}
	}
	t.Logf("killed 8 s into a 20 s answer with %d of %d bytes streamed; restarted: success at attempt %d (%s), sent once, %s from submit",
		killedWith, len(got.Result), got.Attempt, deliveries(got), got.FinishedAt.Sub(got.SubmittedAt).Round(100*time.Millisecond))
}

// TestE2E_Web_KillPoints: one task per kill point, from before the send
// to after the answer's end; every run ends with one success, the whole
// answer and one send.
func TestE2E_Web_KillPoints(t *testing.T) {
	const scale = 0.25 // a 20 s answer takes 5 s
	r, stand := onceRig(t, scale)
	var runs []onceRun
	for i, kp := range killPoints {
		runs = append(runs, runKillPoint(t, r, stand, i, kp, 20*time.Second, scale))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "kill points (20 s answer at scale %.2f):\n", scale)
	for i, run := range runs {
		note := ""
		if run.finishedFirst {
			note = " (the task ended before the kill)"
		}
		fmt.Fprintf(&b, "  %2d  %-28s %-8s sends %d  %-40s %s%s\n", i, run.point, run.result, run.sends, run.deliveries, run.took.Round(100*time.Millisecond), note)
	}
	t.Log(b.String())
}
