//go:build linux

package main

import (
	"strings"
	"testing"
	"time"

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
	var sites []*e2eSite
	for _, r := range []string{"markdown-it", "react-markdown"} {
		sites = append(sites, &e2eSite{name: r, opts: chatstand.Options{Renderer: r, RandomClasses: true}, keys: keys})
	}
	rig := e2eNewSites(t, rigOpts{TaskTimeout: 60 * time.Second}, 0.01, sites...)
	d := rig.start()
	var tasks []e2eTask
	for _, s := range sites {
		for _, c := range []string{"first message 中文 🚀", "second message"} {
			tasks = append(tasks, e2eTask{ID: s.name + "-" + strings.Fields(c)[0], Model: s.name, Content: c + " " + s.name})
		}
	}
	rig.submit(tasks...)
	for _, task := range tasks {
		got := rig.final(taskfile.KindWeb, task.ID, 90*time.Second)
		if want := chatstand.AnswerFor(task.Content); got.State != taskfile.StateSuccess || got.Result != want {
			t.Errorf("%s: state %s error %q result %q, want %q\nlog:\n%s", task.ID, got.State, got.Error, got.Result, want, testkit.Tail(rig.taskLog(taskfile.KindWeb, task.ID), 30))
		}
	}
	d.stop()
	for _, s := range sites {
		for _, task := range tasks {
			if task.Model == s.name && s.stand.SendsOf(task.Content) != 1 {
				t.Errorf("%s: sent %d times, want once", task.ID, s.stand.SendsOf(task.Content))
			}
		}
		if n := len(s.stand.Conversations("demo")); n != 2 {
			t.Errorf("%s: %d conversations, want 2 (New chat before each task)", s.name, n)
		}
	}
}
