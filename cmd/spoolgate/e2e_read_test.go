//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

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
	site := func(name, renderer string, raw bool, read string) *e2eSite {
		return &e2eSite{name: name, opts: chatstand.Options{Renderer: renderer, RawWhileStreaming: raw}, keys: keys + read}
	}
	sites := []*e2eSite{
		site("net", "markdown-it", false, "    read: [network]\n"),
		site("copy", "marked", false, "    read: [copy]\n"),
		site("dom", "react-markdown", false, "    read: [dom]\n"),
		site("text", "markdown-it", true, "    read: [text]\n"),
		site("best", "react-markdown", true, ""), // every key: network first
		{name: "quiet", opts: chatstand.Options{Renderer: "marked"}, keys: keys[:strings.Index(keys, "    done:")]},
	}
	rig := e2eNewSites(t, e2eOpts{TaskTimeout: 60 * time.Second, Retries0: true}, 0.005, sites...)

	// check --send prints the answer as a task gets it, how it was read
	// and the signals seen; a site with no positive signal is told so.
	msg := "[[md=release-notes]] from check"
	code, out, errOut := rig.e2eRun("check", "best", "--send", msg)
	for _, want := range []string{fmt.Sprintf("answer: %q\n", chatstand.MarkdownFor(msg)), "reading: network, then copy, then dom, then text; ends on proof: network: the response to /api/conversation ends, or done: ",
		"read by: network (markdown), ended by ", "signals seen: "} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("check best --send: exit %d, stdout lacks %q:\n%s%s", code, want, out, errOut)
		}
	}
	if !regexp.MustCompile(`(?m)^read by: network \(markdown\), ended by (network end|done)$`).MatchString(out) {
		t.Errorf("check best --send: the answer did not end on a positive signal:\n%s", out)
	}
	code, out, errOut = rig.e2eRun("check", "quiet", "--send", "[[md=links]] quiet")
	for _, want := range []string{"note: the site names no positive end signal (done: or network:)", "read by: dom (markdown), ended by quiet\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("check quiet --send: exit %d, stdout lacks %q:\n%s%s", code, want, out, errOut)
		}
	}
	d := rig.start()
	var tasks []e2eTask
	for _, s := range sites {
		for _, c := range []string{"release-notes", "table-end", "cjk"} {
			tasks = append(tasks, e2eTask{ID: s.name + "-" + c, Model: s.name, Content: "[[md=" + c + "]] for " + s.name})
		}
	}
	turns := []e2eTask{
		{ID: "pause", Model: "best", Content: "[[md=links]] [[pause=1500ms]] a pause longer than quiet"},
		{ID: "errorturn", Model: "best", Content: "[[errorturn]] hello"},
		{ID: "empty", Model: "best", Content: "[[empty]] hello"},
	}
	rig.submit(append(tasks, turns...)...)
	method := map[string]string{"net": "network", "copy": "copy", "dom": "dom", "text": "text", "best": "network", "quiet": "dom"}
	for _, task := range append(tasks, turns[0]) {
		got := rig.final(taskfile.KindWeb, task.ID, 120*time.Second)
		want := chatstand.MarkdownFor(task.Content)
		m := method[task.Model]
		if got.State != taskfile.StateSuccess || got.ResultMethod != m {
			t.Errorf("%s: state %s, read by %q (%s), error %q; want success by %s\nlog:\n%s", task.ID, got.State, got.ResultMethod, got.ResultFormat, got.Error, m, testkit.Tail(rig.taskLog(taskfile.KindWeb, task.ID), 30))
			continue
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
			// The rendered text: the link's words, not its source; the
			// driver's tests compare it with innerText exactly.
			if got.ResultFormat != "text" || strings.Contains(got.Result, "](") || strings.Contains(got.Result, "**") {
				t.Errorf("%s: %s %q, want the rendered text", task.ID, got.ResultFormat, got.Result)
			}
		}
	}
	for _, task := range turns[1:] {
		got := rig.final(taskfile.KindWeb, task.ID, 60*time.Second)
		wantErr := map[string]string{"errorturn": "Something went wrong while generating the response.", "empty": "empty text"}[task.ID]
		if got.State != taskfile.StateFailed || got.ErrorClass != taskfile.ClassTransient || !strings.Contains(got.Error, wantErr) || got.Result != "" {
			t.Errorf("%s: state %s class %s error %q result %q; want failed, transient, %q", task.ID, got.State, got.ErrorClass, got.Error, got.Result, wantErr)
		}
	}
	d.stop()
	out = rig.cli("results", "--format", "jsonl")
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
		}
	}
	if err := json.Unmarshal([]byte(rig.cli("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"network": 7, "copy": 3, "dom": 6, "text": 3}
	for _, l := range st.Lanes {
		if l.Lane == "web" && !maps.Equal(l.ResultMethods, want) {
			t.Errorf("status --json: web lane resultMethods %v, want %v", l.ResultMethods, want)
		}
	}
}
