//go:build linux

package web

import (
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 55's point 3 (the rest) through `spoolgate run`: on a page that
// draws every link of an answer as a button with its URL in data-href,
// the DOM reader keeps each link's text and URL (the same Markdown as
// the model's), and the result check, whose reference is the page's
// text with the link's words in it, calls it verified; the stream's
// exact Markdown is verified against the same page too.
func TestE2E_Web_LinkButtons(t *testing.T) {
	t.Parallel()
	keys := rig.OnceKeys()
	sites := []*rig.Site{
		{Name: "btndom", Opts: chatstand.Options{Renderer: "markdown-it", Links: "button"}, Keys: keys + "    read: [dom]\n"},
		{Name: "btnnet", Opts: chatstand.Options{Renderer: "marked", Links: "button"}, Keys: keys},
	}
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second, Retries0: true}, 0.005, sites...)
	d := sr.Start()
	var tasks []rig.Task
	for _, s := range sites {
		for _, c := range []string{"links", "release-notes"} {
			tasks = append(tasks, rig.Task{ID: s.Name + "-" + c, Model: s.Name, Content: "[[md=" + c + "]] for " + s.Name})
		}
	}
	sr.Submit(tasks...)
	for _, task := range tasks {
		got := sr.Final(taskfile.KindWeb, task.ID, 120*time.Second)
		want := chatstand.MarkdownFor(task.Content)
		if !strings.Contains(want, "](http") {
			t.Fatalf("%s: the answer has no link to draw as a button: %q", task.ID, want)
		}
		if got.State != taskfile.StateSuccess || got.ResultCheck != "verified" {
			t.Errorf("%s: state %s, resultCheck %s %s, error %q\nresult %q\nlog:\n%s", task.ID, got.State, got.ResultCheck, got.ResultDiff, got.Error, got.Result, testkit.Tail(sr.TaskLog(taskfile.KindWeb, task.ID), 20))
			continue
		}
		if exact := got.Result == want || got.ResultMethod == "dom" && testkit.MarkdownHTML(got.Result) == testkit.MarkdownHTML(want); !exact {
			t.Errorf("%s: by %s %q\nwant %q", task.ID, got.ResultMethod, got.Result, want)
		}
	}
	d.Stop()
}
