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

// The modern stand-in page (Markdown answers over SSE, conversations on
// the server, every class renamed at random) works through `spoolgate
// run` with site standin-md's keys, which name it by roles, labels and
// data attributes only: each text is sent once and its answer comes back.
func TestE2E_Web_ModernPage(t *testing.T) {
	t.Parallel()
	keys := testkit.StandinMarkdownSite("x")
	keys = keys[strings.Index(keys, "    input:"):]
	var sites []*rig.Site
	for _, r := range []string{"markdown-it", "react-markdown"} {
		sites = append(sites, &rig.Site{Name: r, Opts: chatstand.Options{Renderer: r, RandomClasses: true}, Keys: keys})
	}
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second}, 0.01, sites...)
	d := sr.Start()
	var tasks []rig.Task
	for _, s := range sites {
		for _, c := range []string{"first message 中文 🚀", "second message"} {
			tasks = append(tasks, rig.Task{ID: s.Name + "-" + strings.Fields(c)[0], Model: s.Name, Content: c + " " + s.Name})
		}
	}
	sr.Submit(tasks...)
	for _, task := range tasks {
		got := sr.Final(taskfile.KindWeb, task.ID, 90*time.Second)
		if want := chatstand.AnswerFor(task.Content); got.State != taskfile.StateSuccess || got.Result != want {
			t.Errorf("%s: state %s error %q result %q, want %q\nlog:\n%s", task.ID, got.State, got.Error, got.Result, want, testkit.Tail(sr.TaskLog(taskfile.KindWeb, task.ID), 30))
		}
	}
	d.Stop()
	for _, s := range sites {
		for _, task := range tasks {
			if task.Model == s.Name && s.Stand.SendsOf(task.Content) != 1 {
				t.Errorf("%s: sent %d times, want once", task.ID, s.Stand.SendsOf(task.Content))
			}
		}
		if n := len(s.Stand.Conversations("demo")); n != 2 {
			t.Errorf("%s: %d conversations, want 2 (New chat before each task)", s.Name, n)
		}
	}
}
