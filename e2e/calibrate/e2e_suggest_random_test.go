//go:build linux

package calibrate

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The project's own stand-in with every class renamed at random on each
// load (a CSS-modules site after a deploy): the site's class selectors
// all broke; `check --suggest --send hello --write` still finds input,
// send, answer and busy from roles, labels and structure, proposes no
// class (each load has other ones), and the written config runs 3 tasks.
func TestE2E_Suggest_RandomClasses(t *testing.T) {
	t.Parallel()
	site := &rig.Site{Name: "random", Opts: chatstand.Options{Renderer: "markdown-it", RandomClasses: true}, Keys: `    input: "textarea.input"
    send: "button.send"
    answer: ".message.assistant"
    busy: "button.stop"
`}
	r := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second}, 0.5, site)
	code, _, errOut := r.Run("check", "random")
	if code != 1 {
		t.Errorf("check with the class selectors: exit %d, want 1\n%s", code, errOut)
	}
	out := r.CLI("check", "random", "--suggest", "--send", "hello", "--write")
	t.Logf("%s", out)
	cfg, err := config.LoadConfig(r.CfgPath)
	if err != nil {
		t.Fatal(err)
	}
	sc := cfg.Sites["random"]
	class := regexp.MustCompile(`\.[_a-zA-Z]`)
	for key, sel := range map[string]string{"input": sc.Input, "send": sc.Send, "answer": sc.Answer, "busy": sc.Busy} {
		switch {
		case sel == "" || sel == map[string]string{"input": "textarea.input", "send": "button.send", "answer": ".message.assistant", "busy": "button.stop"}[key]:
			t.Errorf("%s: not replaced (%q)", key, sel)
		case class.MatchString(sel):
			t.Errorf("%s: %q rests on a class name", key, sel)
		}
	}
	if t.Failed() {
		b, _ := os.ReadFile(r.CfgPath)
		t.Fatalf("config:\n%s", b)
	}
	d := r.Start()
	var tasks []rig.Task
	for i, c := range []string{"one line", "第二段：中文 🚀", `quotes "double" and <tags>`} {
		tasks = append(tasks, rig.Task{ID: fmt.Sprintf("random-%d", i), Model: "random", Content: c})
	}
	r.Submit(tasks...)
	for _, tk := range tasks {
		got := r.Final(taskfile.KindWeb, tk.ID, 90*time.Second)
		if want := chatstand.AnswerFor(tk.Content); got.State != taskfile.StateSuccess || strings.TrimSpace(got.Result) != want {
			t.Errorf("%s: %s %q result %q, want %q\nlog:\n%s", tk.ID, got.State, got.Error, got.Result, want, testkit.Tail(r.TaskLog(taskfile.KindWeb, tk.ID), 25))
		}
		if n := site.Stand.SendsOf(tk.Content); n != 1 {
			t.Errorf("%s: sent %d times", tk.ID, n)
		}
	}
	d.Stop()
}
