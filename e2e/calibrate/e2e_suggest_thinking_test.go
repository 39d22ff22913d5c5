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

// Issue 55's point 4 (calibration): on a reasoning page that draws its
// thinking block beside the answer's element rather than inside it,
// `site new --probe` proposes `thinking:` for that block (found by the
// thinking the stream carried), and the block read from the DOM alone
// (`read: [dom]`, the network key dropped) keeps each task's thinking
// in reasoning, apart from the answer, through `spoolgate run`.
func TestE2E_Suggest_ThinkingBeside(t *testing.T) {
	t.Parallel()
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second, Retries0: true}, 0.005,
		&rig.Site{Name: "beside", Opts: chatstand.Options{Renderer: "marked", Reasoning: chatstand.ReasoningField, ThinkPos: "beside"}, Keys: rig.OnceKeys(),
			Model: "  # %s: site new proposes its keys (beside-auto)\n"})
	block, _, _ := sr.SiteNew("beside-auto", "--url", sr.Site["beside"].Stand.URL()+"?deep=1", "--probe")
	if !regexp.MustCompile(`(?m)^    thinking: `).MatchString(block) {
		t.Fatalf("no thinking: proposed for the block beside the answer:\n%s", block)
	}
	// The DOM alone: the thinking can only come from the page.
	dom := regexp.MustCompile(`(?m)^    (network|read): .*\n`).ReplaceAllString(block, "")
	dom = strings.TrimRight(strings.Replace(dom, "  beside-auto:", "  beside-dom:", 1), "\n") + "\n    read: [dom]\n"
	sr.AddSites("  - {name: beside-dom, kind: web, site: beside-dom, needEmptyPrompt: true}\n", dom)
	d := sr.Start()
	var tasks []rig.Task
	for i, c := range []string{"[[md=release-notes]] a release note", "第二个：中文 🚀 [[md=cjk]]"} {
		tasks = append(tasks, rig.Task{ID: fmt.Sprintf("beside-%d", i), Model: "beside-dom", Content: c})
	}
	sr.Submit(tasks...)
	for _, tk := range tasks {
		got := sr.Final(taskfile.KindWeb, tk.ID, 2*time.Minute)
		want, think := chatstand.MarkdownFor(tk.Content), chatstand.ThinkingFor(tk.Content, chatstand.Modes{DeepThink: true, Model: chatstand.ModelV3})
		if got.State != taskfile.StateSuccess || got.ResultCheck != "verified" || testkit.MarkdownHTML(got.Result) != testkit.MarkdownHTML(want) ||
			testkit.MarkdownHTML(got.Reasoning) != testkit.MarkdownHTML(think) || strings.Contains(got.Result, "用户的问题是") {
			t.Errorf("%s: %s by %s, resultCheck %s %s, error %q\nresult %q\nreasoning %q\nwant %q\nlog:\n%s", tk.ID, got.State, got.ResultMethod, got.ResultCheck, got.ResultDiff, got.Error,
				got.Result, got.Reasoning, think, testkit.Tail(sr.TaskLog(taskfile.KindWeb, tk.ID), 12))
		}
	}
	d.Stop()
}
