package chain

import (
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// finder is a spool of tasks by id, each with its parents.
func finder(tasks map[string][]string) Finder {
	return func(id string) (*taskfile.Task, taskfile.State, bool) {
		after, ok := tasks[id]
		if !ok {
			return nil, "", false
		}
		return &taskfile.Task{TaskID: id, After: after}, taskfile.StatePending, true
	}
}

func TestChain_Check(t *testing.T) {
	spool := finder(map[string][]string{"outline": nil, "b": {"c"}, "c": {"x"}, "d": {"d2"}, "d2": nil})
	for _, tc := range []struct {
		name    string
		task    taskfile.Task
		want    string // substring of the reason; "" accepts
		wantAll string // the whole reason, when it matters
	}{
		{name: "no chain", task: taskfile.Task{TaskID: "x", Content: "hello {{not a ref}}"}},
		{name: "a parent", task: taskfile.Task{TaskID: "x", After: []string{"outline"}, Content: "from {{outline.result}} and {{ outline.thinking }}"}},
		{name: "a grandparent chain", task: taskfile.Task{TaskID: "x", After: []string{"d"}, Content: "y"}},
		{name: "unknown parent", task: taskfile.Task{TaskID: "x", After: []string{"nope"}, Content: "y"},
			wantAll: `after: no task "nope" in the spool: submit a task's parents before it or with it`},
		{name: "itself", task: taskfile.Task{TaskID: "x", After: []string{"x"}, Content: "y"}, want: "this task itself: a cycle"},
		{name: "a cycle through two", task: taskfile.Task{TaskID: "x", After: []string{"outline", "b"}, Content: "y"},
			wantAll: "after: a cycle: x waits for b waits for c waits for x"},
		{name: "bad id", task: taskfile.Task{TaskID: "x", After: []string{"../etc"}, Content: "y"}, want: `after: "../etc" is not a task id`},
		{name: "reference without after", task: taskfile.Task{TaskID: "x", Content: "{{outline.result}}"},
			want: `names "outline", which is not in after`},
		{name: "reference to another", task: taskfile.Task{TaskID: "x", After: []string{"outline"}, Content: "{{d.result}}"},
			want: `names "d", which is not in after`},
		{name: "reference in the prompt", task: taskfile.Task{TaskID: "x", After: []string{"outline"}, Prompt: "{{outline.result}}", Content: "y"},
			want: "prompt: results are filled into the content only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rej := Check(&tc.task, spool)
			got := ""
			if rej != nil {
				got = rej.Msg
				if rej.Class != taskfile.ClassInvalid {
					t.Errorf("class %s, want invalid", rej.Class)
				}
			}
			switch {
			case tc.wantAll != "" && got != tc.wantAll:
				t.Errorf("reason %q, want %q", got, tc.wantAll)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("reason %q, want one containing %q", got, tc.want)
			case tc.want == "" && tc.wantAll == "" && got != "":
				t.Errorf("refused: %q", got)
			}
		})
	}
}

func TestChain_Judge(t *testing.T) {
	states := map[string]taskfile.State{"ok": taskfile.StateSuccess, "bad": taskfile.StateFailed, "off": taskfile.StateCanceled, "run": taskfile.StateRunning}
	state := func(id string) taskfile.State { return states[id] }
	for _, tc := range []struct {
		parents []string
		ready   bool
		reason  string
	}{
		{[]string{"ok"}, true, ""},
		{[]string{"ok", "run", "gone"}, false, "waits for run, gone"},
		{[]string{"run", "bad", "off"}, false, "parent bad failed: a chained task does not run without its parent's result (retry bad to run both)"},
		{[]string{"off"}, false, "parent off canceled: a chained task does not run without its parent's result (retry off to run both)"},
	} {
		v := Judge(tc.parents, state)
		if v.Ready() != tc.ready || v.Reason() != tc.reason {
			t.Errorf("Judge(%v): ready %v reason %q, want %v %q", tc.parents, v.Ready(), v.Reason(), tc.ready, tc.reason)
		}
	}
}

func TestChain_Fill(t *testing.T) {
	done := map[string]*taskfile.Task{
		// A result with edge spaces, a line break and a reference of its
		// own: filled exactly, and never filled again.
		"a": {Result: "  one\n{{b.result}}\n", Reasoning: "think"},
		"b": {Result: "two"},
	}
	for _, tc := range []struct{ in, want string }{
		{"x {{a.result}} y", "x   one\n{{b.result}}\n y"},
		{"{{b.result}}/{{ a.thinking }}", "two/think"},
		{"{{c.result}} stays", "{{c.result}} stays"},
		{"{{a.answer}} is no reference", "{{a.answer}} is no reference"},
	} {
		if got := Fill(tc.in, done); got != tc.want {
			t.Errorf("Fill(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
