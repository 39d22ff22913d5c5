//go:build linux

package web

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 18's acceptance through `spoolgate run`: each method the page
// supports, each renderer, answers that end in a link (shrinking as it
// renders) and in a table, CJK and emoji: network and copy return the
// streamed Markdown exactly, dom the same Markdown elements (README: the
// normalisation), text the rendered text; a pause longer than quiet with
// the done bar absent gives the whole answer; an error turn and an empty
// answer fail with the page's text. The task file and `results` say how
// each answer was read.
func TestE2E_Web_ReadAnswer(t *testing.T) {
	keys := testkit.StandinMarkdownSite("x")
	keys = keys[strings.Index(keys, "    input:"):] // with the reading keys: README's worked example
	site := func(name, renderer string, raw bool, read string) *rig.Site {
		return &rig.Site{Name: name, Opts: chatstand.Options{Renderer: renderer, RawWhileStreaming: raw}, Keys: keys + read}
	}
	sites := []*rig.Site{
		site("net", "markdown-it", false, "    read: [network]\n"),
		site("copy", "marked", false, "    read: [copy]\n"),
		site("dom", "react-markdown", false, "    read: [dom]\n"),
		site("text", "markdown-it", true, "    read: [text]\n"),
		site("best", "react-markdown", true, ""), // every key: network first
		{Name: "quiet", Opts: chatstand.Options{Renderer: "marked"}, Keys: keys[:strings.Index(keys, "    done:")]},
	}
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second, Retries0: true}, 0.005, sites...)

	// check --send prints the answer as a task gets it, how it was read
	// and the signals seen; a site with no positive signal is told so.
	msg := "[[md=release-notes]] from check"
	code, out, errOut := sr.Run("check", "best", "--send", msg)
	for _, want := range []string{fmt.Sprintf("answer: %q\n", chatstand.MarkdownFor(msg)), "reading: network, then copy, then dom, then text; ends on proof: network: the response to /api/conversation ends, or done: ",
		"read by: network (markdown), ended by ", "signals seen: ", "checked against the page: verified"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("check best --send: exit %d, stdout lacks %q:\n%s%s", code, want, out, errOut)
		}
	}
	if !regexp.MustCompile(`(?m)^read by: network \(markdown\), ended by (network end|done)$`).MatchString(out) {
		t.Errorf("check best --send: the answer did not end on a positive signal:\n%s", out)
	}
	code, out, errOut = sr.Run("check", "quiet", "--send", "[[md=links]] quiet")
	for _, want := range []string{"note: the site names no positive end signal (done: or network:)", "read by: dom (markdown), ended by quiet\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("check quiet --send: exit %d, stdout lacks %q:\n%s%s", code, want, out, errOut)
		}
	}
	d := sr.Start()
	var tasks []rig.Task
	for _, s := range sites {
		for _, c := range []string{"release-notes", "table-end", "cjk", "mixed-code"} { // mixed-code: code blocks under a header with a label and Copy
			tasks = append(tasks, rig.Task{ID: s.Name + "-" + c, Model: s.Name, Content: "[[md=" + c + "]] for " + s.Name})
		}
	}
	turns := []rig.Task{
		{ID: "pause", Model: "best", Content: "[[md=links]] [[pause=1500ms]] a pause longer than quiet"},
		{ID: "errorturn", Model: "best", Content: "[[errorturn]] hello"},
		{ID: "empty", Model: "best", Content: "[[empty]] hello"},
	}
	sr.Submit(append(tasks, turns...)...)
	method := map[string]string{"net": "network", "copy": "copy", "dom": "dom", "text": "text", "best": "network", "quiet": "dom"}
	for _, task := range append(tasks, turns[0]) {
		got := sr.Final(taskfile.KindWeb, task.ID, 120*time.Second)
		want := chatstand.MarkdownFor(task.Content)
		m := method[task.Model]
		if got.State != taskfile.StateSuccess || got.ResultMethod != m {
			t.Errorf("%s: state %s, read by %q (%s), error %q; want success by %s\nlog:\n%s", task.ID, got.State, got.ResultMethod, got.ResultFormat, got.Error, m, testkit.Tail(sr.TaskLog(taskfile.KindWeb, task.ID), 30))
			continue
		}
		if got.ResultCheck != "verified" {
			t.Errorf("%s: resultCheck %q %s, want verified (issue 36)", task.ID, got.ResultCheck, got.ResultDiff)
		}
		switch m {
		case "network", "copy":
			if got.Result != want || got.ResultFormat != "markdown" {
				t.Errorf("%s: %s %q, want the streamed Markdown %q", task.ID, got.ResultFormat, got.Result, want)
			}
		case "dom":
			if g, w := testkit.MarkdownHTML(got.Result), testkit.MarkdownHTML(want); g != w || got.ResultFormat != "markdown" {
				t.Errorf("%s: %s %q, want the Markdown elements of %q", task.ID, got.ResultFormat, got.Result, want)
			}
		case "text":
			// The rendered text: the link's words, not its source, no
			// code header; the driver's tests compare it with innerText.
			if got.ResultFormat != "text" || strings.Contains(got.Result, "](") || strings.Contains(got.Result, "**") || strings.Contains(got.Result, "Copy") {
				t.Errorf("%s: %s %q, want the rendered text", task.ID, got.ResultFormat, got.Result)
			}
		}
	}
	for _, task := range turns[1:] {
		got := sr.Final(taskfile.KindWeb, task.ID, 60*time.Second)
		wantErr := map[string]string{"errorturn": "Something went wrong while generating the response.", "empty": "empty text"}[task.ID]
		if got.State != taskfile.StateFailed || got.ErrorClass != taskfile.ClassTransient || !strings.Contains(got.Error, wantErr) || got.Result != "" {
			t.Errorf("%s: state %s class %s error %q result %q; want failed, transient, %q", task.ID, got.State, got.ErrorClass, got.Error, got.Result, wantErr)
		}
	}
	d.Stop()
	out = sr.CLI("results", "--format", "jsonl")
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var row struct{ TaskID, ResultFormat, ResultMethod string }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("results: %v: %q", err, line)
		}
		if row.TaskID == "copy-cjk" && row.ResultFormat == "markdown" && row.ResultMethod == "copy" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("results --format jsonl does not show copy-cjk as markdown by copy:\n%s", out)
	}
	var st struct {
		Lanes []struct {
			Lane          string
			ResultMethods map[string]int
			ResultChecks  map[string]int
		}
	}
	if err := json.Unmarshal([]byte(sr.CLI("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"network": 9, "copy": 4, "dom": 8, "text": 4}
	for _, l := range st.Lanes {
		if l.Lane == "web" && !maps.Equal(l.ResultMethods, want) {
			t.Errorf("status --json: web lane resultMethods %v, want %v", l.ResultMethods, want)
		}
		if want := map[string]int{"verified": 25}; l.Lane == "web" && !maps.Equal(l.ResultChecks, want) {
			t.Errorf("status --json: web lane resultChecks %v, want %v", l.ResultChecks, want)
		}
	}
}

// Issue 36: a page that shows something else than it streamed ("Answre"
// where the stream says "Answer"). Read by network alone the answer is
// kept, marked differs with where, and status names it; read by network
// then dom, the page's own text comes back verified; with verify: strict
// the attempt fails as transient and names the difference.
func TestE2E_Web_ResultDiffers(t *testing.T) {
	t.Parallel()
	keys := testkit.StandinMarkdownSite("x")
	keys = keys[strings.Index(keys, "    input:"):]
	site := func(name, extra string) *rig.Site {
		return &rig.Site{Name: name, Opts: chatstand.Options{Renderer: "markdown-it"}, Keys: keys + extra}
	}
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second, Retries0: true}, 0.005,
		site("lies", "    read: [network]\n"), site("dom", "    read: [network, dom]\n"), site("strict", "    read: [network]\n    verify: strict\n"))
	d := sr.Start()
	tasks := []rig.Task{{ID: "lies-1", Model: "lies", Content: "[[lie]] one"}, {ID: "dom-1", Model: "dom", Content: "[[lie]] two"}, {ID: "strict-1", Model: "strict", Content: "[[lie]] three"}}
	sr.Submit(tasks...)
	got := sr.Final(taskfile.KindWeb, "lies-1", 120*time.Second)
	if got.State != taskfile.StateSuccess || got.Result != chatstand.AnswerFor("[[lie]] one") || got.ResultCheck != "differs" || !strings.Contains(got.ResultDiff, `the page "Answre`) {
		t.Errorf("lies-1: %s %q, resultCheck %q %q; want the streamed answer, differs at Answre", got.State, got.Result, got.ResultCheck, got.ResultDiff)
	}
	got = sr.Final(taskfile.KindWeb, "dom-1", 120*time.Second)
	if got.State != taskfile.StateSuccess || got.ResultMethod != "dom" || got.ResultCheck != "verified" || !strings.Contains(got.Result, "Answre") {
		t.Errorf("dom-1: %s by %s %q, resultCheck %q; want the page's text by dom, verified", got.State, got.ResultMethod, got.Result, got.ResultCheck)
	}
	got = sr.Final(taskfile.KindWeb, "strict-1", 120*time.Second)
	if got.State != taskfile.StateFailed || got.ErrorClass != taskfile.ClassTransient || !strings.Contains(got.Error, "differs from the page (verify: strict)") || got.Result != "" {
		t.Errorf("strict-1: %s %s %q result %q; want failed, transient, naming the difference", got.State, got.ErrorClass, got.Error, got.Result)
	}
	d.Stop()
	if out := sr.CLI("status"); !strings.Contains(out, "checked against the page: 1 verified, 1 DIFFER (lies-1; see their resultDiff), 0 unchecked") {
		t.Errorf("status does not name the task that differs:\n%s", out)
	}
}
