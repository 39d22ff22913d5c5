//go:build linux

package accounts

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 21's acceptance through `spoolgate run`, real headless Chromium
// against the modern stand-in page (conversations at /c/ID generated on
// the server whether or not a page listens): a web prompt is sent once.
// The daemon is SIGKILLed at points from before the send to after the
// answer, restarted, and each task must end success with the whole answer
// and the stand-in must have received its text exactly once.

// onceRig is one stand-in site "md", its spool and signed-in profile.
func onceRig(t *testing.T, scale float64) (*rig.Sites, *chatstand.Server) {
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 2 * time.Minute, MaxRetries: 3}, scale,
		&rig.Site{Name: "md", Opts: chatstand.Options{Renderer: "markdown-it"}, Keys: rig.OnceKeys()})
	return sr, sr.Site["md"].Stand
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
	wait func(r *rig.Sites, stand *chatstand.Server, id, content string, dur time.Duration) bool
}

// untilLog waits for s in the task's log.
func untilLog(s string) func(r *rig.Sites, _ *chatstand.Server, id, _ string, _ time.Duration) bool {
	return func(r *rig.Sites, _ *chatstand.Server, id, _ string, _ time.Duration) bool {
		testkit.Wait(r.T, id+"'s log to say "+s, 60*time.Second, func() bool { return strings.Contains(r.TaskLog(taskfile.KindWeb, id), s) })
		return true
	}
}

// untilSend waits for the running file's send record to reach state, or
// a later one: "sending" lasts only from the record to the page's accepting
// the send (tens of ms on a quiet machine), so a look may first find it
// already "sent"; the kill then comes just after that point, never before.
func untilSend(state taskfile.SendState) func(r *rig.Sites, _ *chatstand.Server, id, _ string, _ time.Duration) bool {
	return func(r *rig.Sites, _ *chatstand.Server, id, _ string, _ time.Duration) bool {
		r.Running(taskfile.KindWeb, id, 60*time.Second, func(t *taskfile.Task) bool {
			return t.Send != nil && (t.Send.State == state || t.Send.State == taskfile.SendSent)
		})
		return true
	}
}

// untilTurn waits until the stand-in's answer to content satisfies cond.
func untilTurn(what string, cond func(tn chatstand.Turn, since time.Duration, dur time.Duration) bool) func(r *rig.Sites, stand *chatstand.Server, id, content string, dur time.Duration) bool {
	return func(r *rig.Sites, stand *chatstand.Server, id, content string, dur time.Duration) bool {
		var first time.Time
		testkit.Wait(r.T, id+": "+what, 2*dur+60*time.Second, func() bool {
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
	{"claimed, before the browser", func(r *rig.Sites, _ *chatstand.Server, id, _ string, _ time.Duration) bool {
		r.Running(taskfile.KindWeb, id, 60*time.Second, func(t *taskfile.Task) bool { return t.Attempt == 1 })
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
	{"answer done + 500 ms", func(r *rig.Sites, stand *chatstand.Server, id, content string, dur time.Duration) bool {
		untilTurn("the answer's end", func(tn chatstand.Turn, _, _ time.Duration) bool { return tn.State == chatstand.TurnDone })(r, stand, id, content, dur)
		deadline := time.Now().Add(500 * time.Millisecond)
		testkit.Wait(r.T, "500 ms after the answer's end", time.Second, func() bool { return !time.Now().Before(deadline) })
		return r.L.Locate(taskfile.KindWeb, id) == taskfile.DirRunning
	}},
}

// quickKillPoints are the kill points `make test` runs: one of each stage.
var quickKillPoints = []string{"text typed, not sent", "send recorded: sending", "send recorded: sent", "40% of the answer", "answer done + 500 ms"}

// onceRun is one kill: submit, kill at the point, restart, collect.
type onceRun struct {
	point, deliveries, result string
	sends                     int
	took                      time.Duration
	finishedFirst             bool
}

func runKillPoint(t *testing.T, r *rig.Sites, stand *chatstand.Server, n int, kp killPoint, answer time.Duration, scale float64) onceRun {
	t.Helper()
	id := fmt.Sprintf("k%02d", n)
	content := fmt.Sprintf("[[duration=%s]] kill point %d: %s", answer, n, kp.name)
	d := rig.OnceStart(r, id+"-first")
	r.Submit(rig.Task{ID: id, Model: "md", Content: content})
	start := time.Now()
	reached := kp.wait(r, stand, id, content, time.Duration(float64(answer)*scale))
	d.Kill()
	d2 := rig.OnceStart(r, id+"-second")
	got := r.Final(taskfile.KindWeb, id, 3*time.Minute)
	d2.Stop()
	run := onceRun{point: kp.name, deliveries: deliveries(got), sends: stand.SendsOf(content), took: time.Since(start), finishedFirst: !reached}
	want := chatstand.AnswerFor(content)
	if got.State != taskfile.StateSuccess || got.Result != want {
		t.Errorf("%s (%s): state %s error %q result %q, want success with %q\nlog:\n%s", id, kp.name, got.State, got.Error, got.Result, want, testkit.Tail(r.TaskLog(taskfile.KindWeb, id), 40))
	}
	if run.sends != 1 {
		t.Errorf("%s (%s): the stand-in received the text %d times, want once (deliveries: %s)\nlog:\n%s", id, kp.name, run.sends, run.deliveries, testkit.Tail(r.TaskLog(taskfile.KindWeb, id), 40))
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
	d := rig.OnceStart(r, "first")
	r.Submit(rig.Task{ID: "long", Model: "md", Content: content})
	sent := r.Running(taskfile.KindWeb, "long", 60*time.Second, func(t *taskfile.Task) bool {
		return t.Send != nil && t.Send.State == taskfile.SendSent && t.Send.Conversation != ""
	})
	at := sent.Send.SentAt.Add(8 * time.Second)
	testkit.Wait(t, "8 s into the answer", 30*time.Second, func() bool { return !time.Now().Before(at) })
	c, ok := stand.Conversation(convOf(sent.Send.Conversation))
	if !ok || len(c.Turns) != 1 || c.Turns[0].State != chatstand.TurnStreaming {
		t.Fatalf("at 8 s the conversation is %+v (found %v), want one turn still streaming", c, ok)
	}
	killedWith := len(c.Turns[0].Answer)
	d.Kill()
	d2 := rig.OnceStart(r, "second")
	// While attempt 2 collects the answer, status says how.
	r.Running(taskfile.KindWeb, "long", 60*time.Second, func(t *taskfile.Task) bool {
		d := t.LastDelivery()
		return t.Attempt == 2 && d != nil && d.N == 2
	})
	statusText := r.CLI("status")
	statusJSON := r.CLI("status", "--json")
	// A loaded machine's status commands can take seconds: what they say
	// is checked only if the task was still running when they returned.
	stillRunning := r.L.Locate(taskfile.KindWeb, "long") == taskfile.DirRunning
	got := r.Final(taskfile.KindWeb, "long", 2*time.Minute)
	d2.Stop()
	log := r.TaskLog(taskfile.KindWeb, "long")
	if !stillRunning {
		t.Log("the reattach ended before the status commands returned; what they showed is not checked")
	}
	if want := "attempt 2  elapsed"; stillRunning && !strings.Contains(statusText, want) || !strings.Contains(statusText, "reattached "+sent.Send.Conversation) {
		t.Errorf("status during the reattach does not show attempt 2 reattached to %s:\n%s", sent.Send.Conversation, statusText)
	}
	if stillRunning && !strings.Contains(statusJSON, `"delivery": "reattached"`) && !strings.Contains(statusJSON, `"delivery":"reattached"`) {
		t.Errorf("status --json during the reattach lacks delivery reattached:\n%s", statusJSON)
	}
	if res := r.CLI("results", "web/long"); !strings.Contains(res, `"conversation":"`+sent.Send.Conversation+`"`) {
		t.Errorf("results lacks the conversation %s: %s", sent.Send.Conversation, res)
	}
	if want := chatstand.AnswerFor(content); got.State != taskfile.StateSuccess || got.Result != want {
		t.Fatalf("state %s error %q result %q, want success with %q\nlog:\n%s", got.State, got.Error, got.Result, want, testkit.Tail(log, 40))
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
	t.Parallel()
	const scale = 0.25 // a 20 s answer takes 5 s
	r, stand := onceRig(t, scale)
	var runs []onceRun
	for i, kp := range killPoints {
		// `make test` kills at one point of each stage (before the send,
		// the send in flight, sent, mid-answer, after the answer); `make
		// reliability` at every point.
		if !testkit.Reliability() && !slices.Contains(quickKillPoints, kp.name) {
			continue
		}
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

// A conversation the site no longer has (deleted by its user): the next
// attempt sends again, once, in a new chat, and says so.
func TestE2E_Web_ForgottenConversation(t *testing.T) {
	t.Parallel()
	r, stand := onceRig(t, 0.25)
	content := "[[duration=20s]] a conversation that will be forgotten"
	d := rig.OnceStart(r, "first")
	r.Submit(rig.Task{ID: "gone", Model: "md", Content: content})
	sent := r.Running(taskfile.KindWeb, "gone", 60*time.Second, func(t *taskfile.Task) bool {
		return t.Send != nil && t.Send.State == taskfile.SendSent && t.Send.Conversation != ""
	})
	d.Kill()
	if !stand.Forget(convOf(sent.Send.Conversation)) {
		t.Fatalf("the stand-in has no conversation %s", sent.Send.Conversation)
	}
	d2 := rig.OnceStart(r, "second")
	got := r.Final(taskfile.KindWeb, "gone", 2*time.Minute)
	d2.Stop()
	log := r.TaskLog(taskfile.KindWeb, "gone")
	if want := chatstand.AnswerFor(content); got.State != taskfile.StateSuccess || got.Result != want {
		t.Fatalf("state %s error %q result %q, want success with %q\nlog:\n%s", got.State, got.Error, got.Result, want, testkit.Tail(log, 40))
	}
	if n := stand.SendsOf(content); n != 2 {
		t.Fatalf("sent %d times, want twice (the first into the forgotten conversation, one resend)", n)
	}
	last := got.LastDelivery()
	if last == nil || last.N != 2 || last.Delivery != taskfile.DeliveryResent || !strings.Contains(last.DeliveryReason, "no longer opens") ||
		last.Conversation == "" || last.Conversation == sent.Send.Conversation || last.PossibleDoubleSend {
		t.Fatalf("attempts %+v: want attempt 2 resent into a new conversation because the old one no longer opens", got.Attempts)
	}
	if !strings.Contains(log, "delivery: resent") || strings.Count(log, "delivery: resent") != 1 {
		t.Errorf("the task log should say resent once:\n%s", log)
	}
	t.Logf("forgotten conversation: %s; reason %q", deliveries(got), last.DeliveryReason)
}

// Text left in the composer (a saved draft the site restores): the
// stand-in receives exactly the task's text.
func TestE2E_Web_LeftoverComposer(t *testing.T) {
	t.Parallel()
	r, stand := onceRig(t, 0.01)
	stand.SetDraft("an old draft that must never be sent")
	d := rig.OnceStart(r, "first")
	content := "exactly this text 中文"
	r.Submit(rig.Task{ID: "clean", Model: "md", Content: content})
	got := r.Final(taskfile.KindWeb, "clean", time.Minute)
	d.Stop()
	if got.State != taskfile.StateSuccess {
		t.Fatalf("state %s error %q", got.State, got.Error)
	}
	var gotContent []string
	for _, m := range stand.Received() {
		gotContent = append(gotContent, m.Content)
	}
	if len(gotContent) != 1 || gotContent[0] != content {
		t.Fatalf("the stand-in received %q, want exactly [%q]", gotContent, content)
	}
	if log := r.TaskLog(taskfile.KindWeb, "clean"); !strings.Contains(log, "cleared and checked empty") {
		t.Errorf("the log does not say the composer was cleared:\n%s", log)
	}
}

// Two hosts on one spool with account leases: the host holding account
// demo is SIGKILLed mid-answer; the other takes the lease once it is
// stale, reclaims the task and reattaches on the same account. One send.
func TestE2E_Web_ReattachOnOtherHost(t *testing.T) {
	t.Parallel()
	testkit.NeedChromium(t)
	stand, err := chatstand.Start(chatstand.Options{Renderer: "markdown-it", Scale: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stand.Close() })
	tail := fmt.Sprintf("models:\n  - {name: md, kind: web, site: md, account: demo, needEmptyPrompt: true}\nsites:\n  md:\n    url: %q\n%saccounts:\n  demo: {site: md}\n", stand.URL(), rig.OnceKeys())
	r := rig.New(t, rig.Opts{Tail: tail, Heartbeat: 500 * time.Millisecond, StaleAfter: 2 * time.Second, TaskTimeout: 2 * time.Minute})
	// Host B: the same spool and key, its own host name and profiles.
	cfgB := filepath.Join(r.Dir, "spoolgate-b.yaml")
	data, err := os.ReadFile(r.CfgPath)
	if err != nil {
		t.Fatal(err)
	}
	profB := filepath.Join(r.Dir, "profiles-b")
	b := strings.Replace(strings.Replace(string(data), "host: e2e\n", "host: e2e-b\n", 1), fmt.Sprintf("profiles: %q", r.Profiles), fmt.Sprintf("profiles: %q", profB), 1)
	if b == string(data) || !strings.Contains(b, "e2e-b") || !strings.Contains(b, profB) {
		t.Fatalf("could not derive host B's config from:\n%s", data)
	}
	if err := os.WriteFile(cfgB, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	cB, err := config.LoadConfig(cfgB)
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[string]string{"e2e": r.Cfg.WebSessions()[0].Profile, "e2e-b": cB.WebSessions()[0].Profile}
	for _, p := range profiles {
		t.Cleanup(func() { testkit.NoProcs(t, p) })
		rig.LoginAs(t, r.Cfg, p, stand.URL(), "demo")
	}
	dA := rig.OnceStart(&rig.Sites{Rig: r}, "host-a")
	rB := *r
	rB.CfgPath, rB.Dir = cfgB, filepath.Join(r.Dir, "b")
	if err := os.MkdirAll(rB.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	rB.T = t
	dB := rig.OnceStart(&rig.Sites{Rig: &rB}, "host-b")
	dA.Daemon.T, dB.Daemon.T = t, t

	content := "[[duration=20s]] moved between hosts"
	r.Submit(rig.Task{ID: "moved", Model: "md", Content: content})
	sent := r.Running(taskfile.KindWeb, "moved", 60*time.Second, func(t *taskfile.Task) bool {
		return t.Send != nil && t.Send.State == taskfile.SendSent && t.Send.Conversation != ""
	})
	holder, _ := spool.ParseOwner(sent.Owner)
	victim, survivor := dA, dB
	if holder == "e2e-b" {
		victim, survivor = dB, dA
	}
	at := sent.Send.SentAt.Add(2 * time.Second) // 8 s of the scaled 20 s answer
	testkit.Wait(t, "40% of the answer", 30*time.Second, func() bool { return !time.Now().Before(at) })
	victim.Kill()
	// The killed host's browser is left behind, as after a crash; nobody
	// restarts that host here, so the test ends it as an operator would.
	t.Cleanup(func() {
		for _, p := range testkit.Pgrep(t, profiles[holder]) {
			if pid, err := strconv.Atoi(p); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	got := r.Final(taskfile.KindWeb, "moved", 2*time.Minute)
	survivor.Stop()
	log := r.TaskLog(taskfile.KindWeb, "moved")
	if want := chatstand.AnswerFor(content); got.State != taskfile.StateSuccess || got.Result != want {
		t.Fatalf("state %s error %q result %q, want success with %q\nlog:\n%s", got.State, got.Error, got.Result, want, testkit.Tail(log, 40))
	}
	if n := stand.SendsOf(content); n != 1 {
		t.Fatalf("sent %d times, want once", n)
	}
	last := got.LastDelivery()
	host, _ := spool.ParseOwner(last.Owner)
	if last.N != 2 || last.Delivery != taskfile.DeliveryReattached || host == holder || last.Account != "demo" || last.Conversation != sent.Send.Conversation {
		t.Fatalf("attempts %+v: want attempt 2 reattached on the other host, account demo, conversation %s", got.Attempts, sent.Send.Conversation)
	}
	t.Logf("holder %s killed 8 s into the answer; %s took account demo's lease and reattached: %s, sent once, %s from the kill to success",
		holder, host, deliveries(got), got.FinishedAt.Sub(at).Round(100*time.Millisecond))
}
