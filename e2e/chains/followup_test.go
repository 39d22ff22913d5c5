//go:build linux

package chains

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// followRig is a modern chat stand-in (conversations at /c/ID kept on the
// server, each message recorded with the chat it went to) with two
// accounts a1 and a2, each signed in on its own profile, the web models
// md and md-transcript (followUpFallback: transcript) on either, md-a1
// and md-a2 on one each, and the API stand-in's models (api-plain...).
func followRig(t *testing.T, scale float64) (*rig.Rig, *chatstand.Server) {
	r, stand, _ := followAPIRig(t, scale)
	return r, stand
}

func followAPIRig(t *testing.T, scale float64) (*rig.Rig, *chatstand.Server, *apistand.Server) {
	t.Helper()
	testkit.NeedChromium(t)
	stand, err := chatstand.Start(chatstand.Options{Renderer: "markdown-it", Scale: scale})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stand.Close() })
	api := rig.APIStand(t, apistand.Options{RequireKey: rig.APIKey, Scale: scale})
	tail := rig.APIModels(api.URL()) + "  - {name: md, kind: web, site: standin-md, needEmptyPrompt: true}\n" +
		"  - {name: md-transcript, kind: web, site: standin-md, needEmptyPrompt: true, followUpFallback: transcript}\n" +
		"  - {name: md-a1, kind: web, site: standin-md, account: a1, needEmptyPrompt: true}\n" +
		"  - {name: md-a2, kind: web, site: standin-md, account: a2, needEmptyPrompt: true}\n" +
		"sites:\n" + testkit.StandinMarkdownSite(stand.URL()) + "accounts:\n  a1: {site: standin-md}\n  a2: {site: standin-md}\n"
	r := rig.New(t, rig.Opts{Tail: tail, Heartbeat: 500 * time.Millisecond, StaleAfter: 2 * time.Second, TaskTimeout: 2 * time.Minute}, "E2E_API_KEY="+rig.APIKey)
	for _, s := range r.Cfg.WebSessions() {
		t.Cleanup(func() { testkit.NoProcs(t, s.Profile) })
		rig.LoginAs(t, r.Cfg, s.Profile, stand.URL(), s.Account)
	}
	return r, stand, api
}

// sentTo is the conversation the stand-in recorded for the one message
// of exactly content, and how many such messages it received.
func sentTo(stand *chatstand.Server, content string) (string, int) {
	conv, n := "", 0
	for _, m := range stand.Received() {
		if m.Content == content {
			conv, n = m.Conversation, n+1
		}
	}
	return conv, n
}

// A draft and two follow-ups ("shorter", "now a title") run in the
// draft's chat, in order, on the draft's account, while the other
// account runs other work; each message is sent once. The follow-ups are
// of model md, which either account may run: only the routing of a
// follow-up keeps them on the draft's.
func TestE2E_FollowUp_ThreeTurns(t *testing.T) {
	t.Parallel()
	r, stand := followRig(t, 0.01)
	d := r.Start()
	defer d.Stop()
	turns := []rig.Task{
		{ID: "draft", Model: "md", Content: "[[duration=100s]] Draft a note about green tea"},
		{ID: "shorter", Model: "md", FollowUp: "draft", Content: "[[duration=100s]] Make it shorter"},
		{ID: "title", Model: "md", FollowUp: "shorter", Content: "[[duration=100s]] Now give it a title"},
	}
	r.Submit(turns[0])
	mine, other := "a1", "a2"
	if r.Final(taskfile.KindWeb, "draft", time.Minute).Account == "a2" {
		mine, other = "a2", "a1"
	}
	// The draft's account busy first, so that the other account, free,
	// finds the follow-up first in the pending order: only its routing
	// keeps it off there. Then the other account's own work, while the
	// follow-ups run.
	first := rig.Task{ID: "first", Model: "md-" + mine, Content: "[[duration=300s]] the draft's account busy first"}
	var busy []rig.Task
	for i := range 4 {
		busy = append(busy, rig.Task{ID: fmt.Sprintf("busy%d", i), Model: "md-" + other, Content: fmt.Sprintf("[[duration=150s]] other work %d", i)})
	}
	r.Submit(append(append([]rig.Task{first}, turns[1:]...), busy...)...)
	var got []*taskfile.Task
	for _, tk := range turns {
		got = append(got, r.Final(taskfile.KindWeb, tk.ID, 2*time.Minute))
	}
	var others []*taskfile.Task
	for _, tk := range busy {
		others = append(others, r.Final(taskfile.KindWeb, tk.ID, 2*time.Minute))
	}
	d.Stop()
	account, conv := got[0].Account, ""
	for i, g := range got {
		if g.State != taskfile.StateSuccess || g.Result != chatstand.AnswerFor(g.Content) {
			t.Fatalf("%s: %s %q (%s)\nlog:\n%s", g.TaskID, g.State, g.Result, g.Error, testkit.Tail(r.TaskLog(taskfile.KindWeb, g.TaskID), 30))
		}
		c, n := sentTo(stand, g.Content)
		if i == 0 {
			conv = c
		}
		if n != 1 || c == "" || c != conv || g.Account != account {
			t.Errorf("%s: sent %d times to chat %q on %s; want once to the draft's chat %q on %s", g.TaskID, n, c, g.Account, conv, account)
		}
		if i > 0 && (g.Thread == nil || len(g.Thread.Turns) != i || g.StartedAt.Before(got[i-1].FinishedAt)) {
			t.Errorf("%s: thread %+v, started %s; want %d earlier turns, after %s ended %s", g.TaskID, g.Thread, g.StartedAt, i, got[i-1].TaskID, got[i-1].FinishedAt)
		}
	}
	c, ok := stand.Conversation(conv)
	var order []string
	for _, tn := range c.Turns {
		order = append(order, tn.Content)
	}
	if want := []string{turns[0].Content, turns[1].Content, turns[2].Content}; !ok || strings.Join(order, "|") != strings.Join(want, "|") {
		t.Errorf("the chat %s holds %q, want the three turns in order %q", conv, order, want)
	}
	// The other account worked meanwhile: a task of its ran while the
	// follow-ups did.
	overlap := 0
	for _, o := range others {
		if o.Account != account && o.StartedAt.Before(got[2].FinishedAt) && o.FinishedAt.After(got[1].StartedAt) {
			overlap++
		}
	}
	if overlap == 0 {
		t.Errorf("no task of the other account ran while the follow-ups did")
	}
	t.Logf("three turns in chat %s on %s (%s to %s); %d tasks of the other account overlapped them", conv, account,
		got[0].StartedAt.Format("15:04:05.000"), got[2].FinishedAt.Format("15:04:05.000"), overlap)
}

// A follow-up whose chat was deleted on the site fails saying so; on a
// model with followUpFallback: transcript it goes to a new chat whose
// first message carries the earlier turns, and its record says so. One
// whose model may not run on the chat's account fails too, rather than
// waiting for ever.
func TestE2E_FollowUp_ChatGone(t *testing.T) {
	t.Parallel()
	r, stand := followRig(t, 0.01)
	d := r.Start()
	defer d.Stop()
	r.Submit(rig.Task{ID: "draft", Model: "md", Content: "Draft a slogan"})
	draft := r.Final(taskfile.KindWeb, "draft", time.Minute)
	if draft.State != taskfile.StateSuccess || draft.Send == nil {
		t.Fatalf("draft: %s (%s)", draft.State, draft.Error)
	}
	conv, _ := sentTo(stand, draft.Content)
	if !stand.Forget(conv) {
		t.Fatalf("the stand-in has no chat %q", conv)
	}
	other := map[string]string{"a1": "md-a2", "a2": "md-a1"}[draft.Account]
	r.Submit(rig.Task{ID: "strict", Model: "md", FollowUp: "draft", Content: "Shorter, please"},
		rig.Task{ID: "lenient", Model: "md-transcript", FollowUp: "draft", Content: "Shorter, then"},
		rig.Task{ID: "elsewhere", Model: other, FollowUp: "draft", Content: "Shorter, elsewhere"})
	if got := r.Final(taskfile.KindWeb, "elsewhere", time.Minute); got.State != taskfile.StateFailed ||
		!strings.HasPrefix(got.Error, "followUp: the chat of draft is gone: it is account "+draft.Account+"'s chat") {
		t.Errorf("elsewhere (%s, the chat on %s): %s %q, want failed as gone", other, draft.Account, got.State, got.Error)
	}
	strict := r.Final(taskfile.KindWeb, "strict", time.Minute)
	if want := "followUp: the chat of draft is gone: the site shows notFound"; strict.State != taskfile.StateFailed || !strings.HasPrefix(strict.Error, want) {
		t.Errorf("strict: %s %q, want failed %q", strict.State, strict.Error, want)
	}
	if _, n := sentTo(stand, "Shorter, please"); n != 0 {
		t.Errorf("strict was sent %d times, want never", n)
	}
	lenient := r.Final(taskfile.KindWeb, "lenient", time.Minute)
	want := taskfile.TranscriptText([]taskfile.Turn{{Content: draft.Content, Result: draft.Result}}, "Shorter, then")
	to, n := sentTo(stand, want)
	if lenient.State != taskfile.StateSuccess || n != 1 || to == "" || to == conv {
		t.Errorf("lenient: %s (%s); the transcript was sent %d times, to %q (the gone chat %q)", lenient.State, lenient.Error, n, to, conv)
	}
	if last := lenient.LastDelivery(); last == nil || !strings.Contains(last.DeliveryReason, "the earlier turns sent as a transcript") {
		t.Errorf("lenient's attempts do not say it sent a transcript: %+v", lenient.Attempts)
	}
}

// A daemon killed between a follow-up's send and its answer: the next
// daemon reattaches to the chat and sends nothing twice.
func TestE2E_FollowUp_KilledAfterSend(t *testing.T) {
	t.Parallel()
	r, stand := followRig(t, 0.25)
	d := r.Start()
	d.WaitReady()
	content := "[[duration=20s]] Now in English, please"
	r.Submit(rig.Task{ID: "draft", Model: "md", Content: "[[duration=2s]] Draft a caption"},
		rig.Task{ID: "english", Model: "md", FollowUp: "draft", Content: content})
	sent := r.Running(taskfile.KindWeb, "english", time.Minute, func(t *taskfile.Task) bool {
		return t.Send != nil && t.Send.State == taskfile.SendSent && t.Send.Conversation != ""
	})
	d.Kill()
	d2 := r.Start()
	defer d2.Stop()
	got := r.Final(taskfile.KindWeb, "english", 2*time.Minute)
	draft := r.Read(taskfile.KindWeb, taskfile.DirDone, "draft")
	if got.State != taskfile.StateSuccess || got.Result != chatstand.AnswerFor(content) {
		t.Fatalf("english: %s %q (%s)\nlog:\n%s", got.State, got.Result, got.Error, testkit.Tail(r.TaskLog(taskfile.KindWeb, "english"), 30))
	}
	to, n := sentTo(stand, content)
	first, _ := sentTo(stand, draft.Content)
	if n != 1 || to != first || sent.Send.Conversation != draft.Send.Conversation {
		t.Errorf("english was sent %d times, to chat %q (%s); the draft's chat is %q (%s)", n, to, sent.Send.Conversation, first, draft.Send.Conversation)
	}
	if last := got.LastDelivery(); last == nil || last.N != 2 || last.Delivery != taskfile.DeliveryReattached {
		t.Errorf("attempts %+v: want attempt 2 reattached", got.Attempts)
	}
}

// A table of two rows through `spoolgate submit --table`: each row's
// draft on the web, row 2's follow-up column sent in the draft's chat,
// and each row chained to a summary on the API model from the row's last
// answer.
func TestE2E_FollowUp_Table(t *testing.T) {
	t.Parallel()
	r, stand, _ := followAPIRig(t, 0.01)
	d := r.Start()
	defer d.Stop()
	csv := filepath.Join(r.Dir, "menu.csv")
	if err := os.WriteFile(csv, []byte("topic,more\ntea,Shorter\ncoffee,\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := r.CLI("submit", "--table", csv, "--model", "md", "--template", "Write about {{topic}}", "--followup-col", "more",
		"--then-model", "api-plain", "--then", "Summarize: {{result}}")
	if want := "menu-r2\nmenu-r2-f\nmenu-r2-c\nmenu-r3\nmenu-r3-c\n"; out != want {
		t.Fatalf("submit --table printed %q, want %q", out, want)
	}
	r2 := r.Final(taskfile.KindWeb, "menu-r2", time.Minute)
	r2f := r.Final(taskfile.KindWeb, "menu-r2-f", time.Minute)
	r2c := r.Final(taskfile.KindAPI, "menu-r2-c", time.Minute)
	r3 := r.Final(taskfile.KindWeb, "menu-r3", time.Minute)
	r3c := r.Final(taskfile.KindAPI, "menu-r3-c", time.Minute)
	for _, g := range []*taskfile.Task{r2, r2f, r2c, r3, r3c} {
		if g.State != taskfile.StateSuccess {
			t.Fatalf("%s: %s (%s)", g.TaskID, g.State, g.Error)
		}
	}
	c1, _ := sentTo(stand, r2.Content)
	c2, n := sentTo(stand, "Shorter")
	if c1 == "" || c2 != c1 || n != 1 || r2f.Account != r2.Account {
		t.Errorf("the follow-up went %d times to chat %q on %s; the row's draft to %q on %s", n, c2, r2f.Account, c1, r2.Account)
	}
	if r2c.Content != "Summarize: "+r2f.Result || r3c.Content != "Summarize: "+r3.Result {
		t.Errorf("chained contents %q and %q, want each filled from its row's last answer (%q, %q)", r2c.Content, r3c.Content, r2f.Result, r3.Result)
	}
	// results lists the row's turns together, each with its place.
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(r.CLI("results", "--batch", "menu")), "\n") {
		var row struct {
			TaskID, FollowUp string
			After            []string
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		order = append(order, row.TaskID+"<"+row.FollowUp+strings.Join(row.After, ","))
	}
	if i := slices.Index(order, "menu-r2<"); i < 0 || i+1 >= len(order) || order[i+1] != "menu-r2-f<menu-r2" || !slices.Contains(order, "menu-r3-c<menu-r3") {
		t.Errorf("results lists %q: want menu-r2-f (followUp menu-r2) right after menu-r2, and menu-r3-c after menu-r3", order)
	}
}
