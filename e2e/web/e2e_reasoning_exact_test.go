//go:build linux

package web

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 55's point 4 through `spoolgate run`, the thinking read from the
// page (the stream's thinking field is not in the keys):
//
//   - plain: the page draws its thinking as text in a pre-wrap block, one
//     line a step: the reasoning keeps every line break, exactly;
//   - gone: the page removes its thinking block once the answer ends
//     (its end judged by the page: no network key);
//   - emptied: it keeps the block's label and drops its text.
//
// In the last two the thinking is the one read while the answer
// streamed. And point 3's rest: on a page that draws every link of an
// answer as a button with its URL in data-href (btndom, btnnet), the DOM
// reader keeps each link's text and URL, and the result check, whose
// reference is the page's text with the link's words in it, calls it
// verified; the stream's exact Markdown is verified against the same
// page too. Every answer exact and verified.
func TestE2E_Web_ReasoningAndLinksExact(t *testing.T) {
	t.Parallel()
	keys := strings.Replace(rig.OnceKeys(), "path: delta, reasoning: reasoning}", "path: delta}", 1) // the thinking only on the page
	if strings.Contains(keys, "reasoning: ") {
		t.Fatalf("the keys read the thinking from the stream:\n%s", keys)
	}
	// gone's answer ends by the page alone (done:), when it has removed
	// its thinking, not by the response's end, which comes first.
	noNet := regexp.MustCompile(`(?m)^    network: .*\n`).ReplaceAllString(keys, "")
	model := "  - {name: %[1]s, kind: web, site: %[1]s, modes: {deepThink: on}}\n"
	sites := []*rig.Site{
		{Name: "plain", Opts: chatstand.Options{Renderer: "marked", Reasoning: chatstand.ReasoningField, ThinkView: "plain"}, Keys: keys + e2eReasoningModes, Model: model},
		{Name: "gone", Opts: chatstand.Options{Renderer: "marked", Reasoning: chatstand.ReasoningField, ThinkView: "plain", ThinkEnd: "remove"}, Keys: noNet + e2eReasoningModes, Model: model},
		{Name: "emptied", Opts: chatstand.Options{Renderer: "markdown-it", Reasoning: chatstand.ReasoningField, ThinkEnd: "empty"}, Keys: keys + e2eReasoningModes + "    read: [dom]\n", Model: model},
		{Name: "btndom", Opts: chatstand.Options{Renderer: "markdown-it", Links: "button"}, Keys: keys + "    read: [dom]\n"},
		{Name: "btnnet", Opts: chatstand.Options{Renderer: "marked", Links: "button"}, Keys: keys},
	}
	links := map[string]bool{"btndom": true, "btnnet": true}
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second, Retries0: true}, 0.005, sites...)
	d := sr.Start()
	var tasks []rig.Task
	for _, s := range sites {
		corpus := []string{"release-notes", "cjk"}
		if links[s.Name] {
			corpus = []string{"links", "release-notes"} // each with links
		}
		for _, c := range corpus {
			tasks = append(tasks, rig.Task{ID: s.Name + "-" + c, Model: s.Name, Content: "[[md=" + c + "]] for " + s.Name})
		}
	}
	sr.Submit(tasks...)
	for _, task := range tasks {
		got := sr.Final(taskfile.KindWeb, task.ID, 120*time.Second)
		want, think := chatstand.MarkdownFor(task.Content), chatstand.ThinkingFor(task.Content, chatstand.Modes{DeepThink: true, Model: chatstand.ModelV3})
		switch {
		case links[task.Model]:
			think = ""
			if !strings.Contains(want, "](http") {
				t.Fatalf("%s: the answer has no link to draw as a button: %q", task.ID, want)
			}
		case !strings.Contains(think, "\n- "):
			t.Fatalf("the stand-in's thinking has no line breaks to keep: %q", think)
		}
		if got.State != taskfile.StateSuccess || got.ResultCheck != "verified" {
			t.Errorf("%s: state %s, resultCheck %s %s, error %q\nlog:\n%s", task.ID, got.State, got.ResultCheck, got.ResultDiff, got.Error, testkit.Tail(sr.TaskLog(taskfile.KindWeb, task.ID), 30))
			continue
		}
		// Read by dom, the answer is the same Markdown elements; the
		// thinking drawn as plain text is its text exactly, line breaks
		// and all, and the one drawn as Markdown the same elements.
		exact := got.Result == want && got.Reasoning == think
		if got.ResultMethod == "dom" {
			exact = testkit.MarkdownHTML(got.Result) == testkit.MarkdownHTML(want) && (got.Reasoning == think || task.Model == "emptied" && testkit.MarkdownHTML(got.Reasoning) == testkit.MarkdownHTML(think))
		}
		if !exact {
			t.Errorf("%s: by %s %q\nreasoning %q\nwant %q\nand  %q", task.ID, got.ResultMethod, got.Result, got.Reasoning, want, think)
		}
	}
	d.Stop()
}
