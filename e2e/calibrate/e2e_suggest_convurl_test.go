//go:build linux

package calibrate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 55's point 1 (the rest) through the CLI and `spoolgate run`: a
// page that posts each message to /api/chat/ID/messages/N, its
// conversation's ID and the message's number in the path (as Kimi-like
// sites do). `site new` proposes the network key with those ids as `*`
// (/api/chat/*/messages/*), checked on the second probe's new
// conversation; the block, pasted unchanged, reads every later task by
// network, from conversations the probe never saw: no fallback, each
// answer exact and verified.
func TestE2E_Suggest_ConversationURL(t *testing.T) {
	t.Parallel()
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second, Retries0: true}, 0.005,
		&rig.Site{Name: "conv", Opts: chatstand.Options{Renderer: "marked", ConvURL: true}, Keys: rig.OnceKeys(),
			Model: "  # %s: site new proposes its keys (conv-auto)\n"})
	block, out, _ := sr.SiteNew("conv-auto", "--url", sr.Site["conv"].Stand.URL(), "--send", "hello")
	if !strings.Contains(block, `network: {url: "/api/chat/*/messages/*", format: sse, path: delta}`) {
		t.Errorf("the network key does not match past the probe's ids:\n%s", block)
	}
	if !strings.Contains(out, "confirmed by a second probe") && !strings.Contains(out, "in a new conversation, too") {
		t.Errorf("the network key was not checked on a second conversation:\n%s", out)
	}
	if t.Failed() {
		return
	}
	sr.AddSites("  - {name: conv-auto, kind: web, site: conv-auto, needEmptyPrompt: true}\n", block)
	d := sr.Start()
	var tasks []rig.Task
	for i, c := range []string{"[[md=release-notes]] a release note", "第二个：中文 🚀 [[md=cjk]]"} {
		tasks = append(tasks, rig.Task{ID: fmt.Sprintf("conv-%d", i), Model: "conv-auto", Content: c})
	}
	sr.Submit(tasks...)
	for _, tk := range tasks {
		got := sr.Final(taskfile.KindWeb, tk.ID, 2*time.Minute)
		if want := chatstand.MarkdownFor(tk.Content); got.State != taskfile.StateSuccess || got.ResultCheck != "verified" || got.Result != want ||
			got.ResultMethod != "network" || got.ResultFallback != "" {
			t.Errorf("%s: %s by %s (fell back from %q), resultCheck %s %s, error %q\nresult %q\nwant   %q\nlog:\n%s", tk.ID, got.State, got.ResultMethod, got.ResultFallback, got.ResultCheck, got.ResultDiff, got.Error,
				got.Result, want, testkit.Tail(sr.TaskLog(taskfile.KindWeb, tk.ID), 12))
		}
	}
	d.Stop()
}
