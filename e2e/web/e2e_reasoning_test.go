//go:build linux

package web

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// e2eReasoningModes are the stand-in's reasoning page's mode keys.
const e2eReasoningModes = `    modes:
      deepThink: {switch: "button.deep-think", state: aria-pressed}
      search: {switch: "button.web-search", state: "class:on"}
      model: {menu: "button.model-picker", option: "[role=menuitemradio]"}
`

// Issue 39's acceptance through `spoolgate run`, on the stand-in's
// reasoning page with hand-written keys: thinking in its own events
// (read by network, with network.reasoning; and by dom, from the page's
// thinking block), and inline as <think> (read by network). Every answer
// exact, every thinking exactly in `reasoning` and never in the result,
// resultCheck verified; models of one site that differ by deep thinking
// run each in its own mode on the one account, one at a time; a model
// with keepReasoning: false keeps none; `results` shows the thinking.
func TestE2E_Web_Reasoning(t *testing.T) {
	t.Parallel()
	keys := testkit.StandinMarkdownSite("x")
	keys = keys[strings.Index(keys, "    input:"):]
	withReasoning := strings.Replace(keys, "path: delta}", "path: delta, reasoning: reasoning}", 1)
	sites := []*rig.Site{
		{Name: "think", Opts: chatstand.Options{Renderer: "marked", Reasoning: chatstand.ReasoningField}, Keys: withReasoning + e2eReasoningModes,
			Model: "  - {name: think-on, kind: web, site: %[1]s, modes: {deepThink: on, search: off}}\n" +
				"  - {name: think-off, kind: web, site: %[1]s, modes: {deepThink: off, search: on}}\n" +
				"  - {name: think-nokeep, kind: web, site: %[1]s, keepReasoning: false, modes: {deepThink: on, search: off}}\n"},
		{Name: "thinkdom", Opts: chatstand.Options{Renderer: "react-markdown", Reasoning: chatstand.ReasoningField}, Keys: keys + e2eReasoningModes + "    read: [dom]\n",
			Model: "  - {name: thinkdom-on, kind: web, site: %[1]s, modes: {deepThink: on}}\n"},
		{Name: "inline", Opts: chatstand.Options{Renderer: "markdown-it", Reasoning: chatstand.ReasoningInline}, Keys: keys + e2eReasoningModes,
			Model: "  - {name: inline-on, kind: web, site: %[1]s, modes: {model: R1}}\n"},
	}
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second, Retries0: true}, 0.005, sites...)
	// check reports each mode's control as the page shows it.
	code, out, errOut := sr.Run("check", "think")
	for _, want := range []string{`mode deepThink  button.deep-think            switch by aria-pressed: found, reads off (aria-pressed="false")`,
		`mode model      button.model-picker          menu: found, chosen "V3"`, `mode search     button.web-search            switch by class:on: found, reads off (class="mode web-search")`} {
		if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("check think: exit %d, stdout lacks %q:\n%s%s", code, want, out, errOut)
		}
	}
	d := sr.Start()
	corpus := []string{"release-notes", "go-code", "cjk", "mixed-code"}
	var tasks []rig.Task
	for _, m := range []string{"think-on", "thinkdom-on", "inline-on"} {
		for _, c := range corpus {
			tasks = append(tasks, rig.Task{ID: m + "-" + c, Model: m, Content: "[[md=" + c + "]] for " + m})
		}
	}
	tasks = append(tasks, rig.Task{ID: "think-off-1", Model: "think-off", Content: "[[md=faq]] off"}, rig.Task{ID: "think-nokeep-1", Model: "think-nokeep", Content: "[[md=faq]] nokeep"})
	sr.Submit(tasks...)
	modes := map[string]chatstand.Modes{
		"think-on": {DeepThink: true, Model: "V3"}, "thinkdom-on": {DeepThink: true, Model: "V3"}, "inline-on": {Model: "R1"},
		"think-off": {Search: true, Model: "V3"}, "think-nokeep": {DeepThink: true, Model: "V3"},
	}
	ran := map[string]string{"think-on": "deepThink on, search off", "thinkdom-on": "deepThink on", "inline-on": "model R1", "think-off": "deepThink off, search on", "think-nokeep": "deepThink on, search off"}
	for _, task := range tasks {
		got := sr.Final(taskfile.KindWeb, task.ID, 120*time.Second)
		want, think := chatstand.MarkdownFor(task.Content), chatstand.ThinkingFor(task.Content, modes[task.Model])
		if task.Model == "think-nokeep" {
			think = ""
		}
		if got.State != taskfile.StateSuccess || got.ResultCheck != "verified" {
			t.Errorf("%s: state %s, resultCheck %s %s, error %q\nlog:\n%s", task.ID, got.State, got.ResultCheck, got.ResultDiff, got.Error, testkit.Tail(sr.TaskLog(taskfile.KindWeb, task.ID), 30))
			continue
		}
		if task.Model == "thinkdom-on" {
			if testkit.MarkdownHTML(got.Result) != testkit.MarkdownHTML(want) || testkit.MarkdownHTML(got.Reasoning) != testkit.MarkdownHTML(think) {
				t.Errorf("%s: by dom %q\nreasoning %q\nwant the elements of %q\nand %q", task.ID, got.Result, got.Reasoning, want, think)
			}
		} else if got.Result != want || got.Reasoning != think {
			t.Errorf("%s: by %s %q\nreasoning %q\nwant %q\nand %q", task.ID, got.ResultMethod, got.Result, got.Reasoning, want, think)
		}
		if strings.Contains(got.Result, "用户的问题是") {
			t.Errorf("%s: the thinking is in the result: %q", task.ID, got.Result)
		}
		if n := len(got.Attempts); n == 0 || got.Attempts[n-1].Modes != ran[task.Model] {
			t.Errorf("%s: attempts %+v, want the last to say modes %q", task.ID, got.Attempts, ran[task.Model])
		}
	}
	d.Stop()
	// The stand-in's log: each generation in its model's mode, the
	// account one generation at a time across the models.
	think := sr.Site["think"].Stand
	for _, m := range think.Received() {
		model := m.Content[strings.LastIndex(m.Content, " ")+1:]
		if want, ok := map[string]chatstand.Modes{"off": modes["think-off"], "nokeep": modes["think-nokeep"]}[model]; ok && m.Modes != want || !ok && m.Modes != modes["think-on"] {
			t.Errorf("the stand-in ran %q in %+v", m.Content, m.Modes)
		}
	}
	if mx := think.MaxPerAccount()["demo"]; mx != 1 {
		t.Errorf("the account ran %d generations at once, want 1", mx)
	}
	out = sr.CLI("results", "--format", "jsonl")
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var row struct{ TaskID, Result, Reasoning string }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("results: %v: %q", err, line)
		}
		if row.Reasoning != "" && !strings.Contains(row.Result, row.Reasoning) {
			n++
		}
	}
	if n != 12 {
		t.Errorf("results --format jsonl shows the thinking apart in %d rows, want 12:\n%s", n, out)
	}
	var st struct {
		Lanes []struct {
			Lane      string
			Reasoning int
		}
	}
	if err := json.Unmarshal([]byte(sr.CLI("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	for _, l := range st.Lanes {
		if l.Lane == "web" && l.Reasoning != 12 {
			t.Errorf("status --json: the web lane's reasoning %d, want 12", l.Reasoning)
		}
	}
	if csv := sr.CLI("results", "--format", "csv"); !strings.Contains(strings.SplitN(csv, "\n", 2)[0], "reasoning") {
		t.Errorf("results (CSV) has no reasoning column:\n%s", csv)
	}
}
