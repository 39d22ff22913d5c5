//go:build linux

package calibrate

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 55: calibration proposes keys that fit more than its probe,
// through the CLI and `spoolgate run`, on two stand-in pages:
//
//   - conv: each message goes to /api/chat/ID/messages/N, its
//     conversation's ID and the message's number in the path (as
//     Kimi-like sites do). `site new` proposes the network key with those
//     ids as `*` (/api/chat/*/messages/*), checked on the second probe's
//     new conversation; pasted unchanged, it reads every later task by
//     network, from conversations the probe never saw: no fallback.
//   - beside: a reasoning page that draws its thinking block beside the
//     answer's element, not inside it. `site new --probe` proposes
//     `thinking:` for it (found by the thinking the stream carried), and
//     the block read from the DOM alone (`read: [dom]`, the network key
//     dropped) keeps each task's thinking in reasoning, apart.
//
// Every answer exact and verified.
func TestE2E_Suggest_BeyondTheProbe(t *testing.T) {
	t.Parallel()
	model := "  # %s: site new proposes its keys\n"
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second, Retries0: true}, 0.005,
		&rig.Site{Name: "conv", Opts: chatstand.Options{Renderer: "marked", ConvURL: true}, Keys: rig.OnceKeys(), Model: model},
		&rig.Site{Name: "beside", Opts: chatstand.Options{Renderer: "marked", Reasoning: chatstand.ReasoningField, ThinkPos: "beside"}, Keys: rig.OnceKeys(), Model: model})
	conv, out, _ := sr.SiteNew("conv-auto", "--url", sr.Site["conv"].Stand.URL(), "--send", "hello")
	if !strings.Contains(conv, `network: {url: "/api/chat/*/messages/*", format: sse, path: delta}`) {
		t.Errorf("the network key does not match past the probe's ids:\n%s", conv)
	}
	if !strings.Contains(out, "confirmed by a second probe") && !strings.Contains(out, "in a new conversation, too") {
		t.Errorf("the network key was not checked on a second conversation:\n%s", out)
	}
	beside, _, _ := sr.SiteNew("beside-auto", "--url", sr.Site["beside"].Stand.URL()+"?deep=1", "--probe")
	if !regexp.MustCompile(`(?m)^    thinking: `).MatchString(beside) {
		t.Errorf("no thinking: proposed for the block beside the answer:\n%s", beside)
	}
	if t.Failed() {
		return
	}
	// The DOM alone: the thinking can only come from the page.
	dom := regexp.MustCompile(`(?m)^    (network|read): .*\n`).ReplaceAllString(beside, "")
	dom = strings.TrimRight(strings.Replace(dom, "  beside-auto:", "  beside-dom:", 1), "\n") + "\n    read: [dom]\n"
	sr.AddSites("  - {name: conv-auto, kind: web, site: conv-auto, needEmptyPrompt: true}\n  - {name: beside-dom, kind: web, site: beside-dom, needEmptyPrompt: true}\n", conv+dom)
	d := sr.Start()
	var tasks []rig.Task
	for _, m := range []string{"conv-auto", "beside-dom"} {
		for i, c := range []string{"[[md=release-notes]] a release note", "第二个：中文 🚀 [[md=cjk]]"} {
			tasks = append(tasks, rig.Task{ID: fmt.Sprintf("%s-%d", m, i), Model: m, Content: c})
		}
	}
	sr.Submit(tasks...)
	for _, tk := range tasks {
		got := sr.Final(taskfile.KindWeb, tk.ID, 2*time.Minute)
		want, think := chatstand.MarkdownFor(tk.Content), ""
		ok := got.Result == want && got.ResultMethod == "network" && got.ResultFallback == "" && got.Reasoning == ""
		if tk.Model == "beside-dom" {
			think = chatstand.ThinkingFor(tk.Content, chatstand.Modes{DeepThink: true, Model: chatstand.ModelV3})
			ok = testkit.MarkdownHTML(got.Result) == testkit.MarkdownHTML(want) && testkit.MarkdownHTML(got.Reasoning) == testkit.MarkdownHTML(think) && !strings.Contains(got.Result, "用户的问题是")
		}
		if !ok || got.State != taskfile.StateSuccess || got.ResultCheck != "verified" {
			t.Errorf("%s: %s by %s (fell back from %q), resultCheck %s %s, error %q\nresult %q\nwant   %q\nreasoning %q\nwant      %q\nlog:\n%s", tk.ID, got.State, got.ResultMethod, got.ResultFallback, got.ResultCheck, got.ResultDiff, got.Error,
				got.Result, want, got.Reasoning, think, testkit.Tail(sr.TaskLog(taskfile.KindWeb, tk.ID), 12))
		}
	}
	d.Stop()
}
