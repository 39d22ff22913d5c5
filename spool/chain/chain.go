// Package chain is the rule of task chains: which tasks a task waits for
// (after:), the one-line reasons intake refuses a chain with (an unknown
// parent, a cycle, a reference to a task it does not wait for), whether
// its parents let it run, and its content filled from their results.
//
// It reads nothing itself: the caller's Finder says where a task is, so
// the Store (at intake) and the lanes (at claim, from the share's final
// files, never from memory) ask the same questions of the same folders.
package chain

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Finder finds a task by id wherever the spool holds it: its record and
// its state (pending for a drop not yet taken in); ok false when none
// has it.
type Finder func(id string) (t *taskfile.Task, state taskfile.State, ok bool)

// refRe is a reference to a parent's result or thinking: {{ID.result}}
// or {{ID.thinking}}, spaces allowed inside the braces. ID is matched
// loosely (anything but braces and space) so that a reference to a
// misspelt or invalid id is refused by name rather than left as text.
var refRe = regexp.MustCompile(`\{\{\s*([^{}\s]+)\.(result|thinking)\s*\}\}`)

// maxWalk bounds the tasks a cycle check reads: a chain deeper than this
// is refused rather than read without end.
const maxWalk = 1000

// Parents is the tasks t waits for, each once, in the order written: its
// after: and its followUp.
func Parents(t *taskfile.Task) []string {
	var out []string
	all := t.After
	if t.FollowUp != "" {
		all = append(all[:len(all):len(all)], t.FollowUp)
	}
	for _, p := range all {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Check is intake's judgment of t's chain: every parent a valid task id
// the spool holds, not t itself nor waiting (through its own parents) for
// t, and every reference in the content to a parent t waits for. The
// reason, if any, is one line naming the field and the task at fault.
func Check(t *taskfile.Task, find Finder) *taskfile.RejectError {
	parents := Parents(t)
	for _, m := range refRe.FindAllStringSubmatch(t.Content, -1) {
		if !slices.Contains(parents, m[1]) {
			return taskfile.Rejectf(taskfile.ClassInvalid, "content: %s names %q, which is not in after: a task uses only the results of tasks it waits for",
				taskfile.Clip(m[0]), taskfile.Clip(m[1]))
		}
	}
	if refRe.MatchString(t.Prompt) {
		return taskfile.Rejectf(taskfile.ClassInvalid, "prompt: results are filled into the content only; move %s there", taskfile.Clip(refRe.FindString(t.Prompt)))
	}
	if len(parents) == 0 {
		return nil
	}
	for _, p := range parents {
		field := "after"
		if p == t.FollowUp && !slices.Contains(t.After, p) {
			field = "followUp"
		}
		if why := taskfile.TaskIDProblem(p); why != "" {
			return taskfile.Rejectf(taskfile.ClassInvalid, "%s: %q is not a task id: %s", field, taskfile.Clip(p), why)
		}
		if p == t.TaskID {
			return taskfile.Rejectf(taskfile.ClassInvalid, "%s: %q is this task itself: a cycle", field, p)
		}
		if _, _, ok := find(p); !ok {
			return taskfile.Rejectf(taskfile.ClassInvalid, "%s: no task %q in the spool: submit a task's parents before it or with it", field, p)
		}
	}
	if path := cycle(t.TaskID, parents, find); path != nil {
		return taskfile.Rejectf(taskfile.ClassInvalid, "after: a cycle: %s", strings.Join(path, " waits for "))
	}
	return nil
}

// cycle walks the parents' own parents; if the walk comes back to id it
// returns the path (id, …, id), else nil.
func cycle(id string, parents []string, find Finder) []string {
	from := map[string]string{} // task → the task that waits for it, along the walk
	queue := []string{}
	for _, p := range parents {
		from[p] = id
		queue = append(queue, p)
	}
	for n := 0; len(queue) > 0 && n < maxWalk; n++ {
		cur := queue[0]
		queue = queue[1:]
		t, _, ok := find(cur)
		if !ok {
			continue
		}
		for _, p := range Parents(t) {
			if p == id {
				path := []string{id}
				for c := cur; c != id; c = from[c] {
					path = append(path, c)
				}
				path = append(path, id)
				// path runs id ← … ← cur ← id backwards: reverse the inner part.
				slices.Reverse(path[1 : len(path)-1])
				return path
			}
			if _, seen := from[p]; !seen {
				from[p] = cur
				queue = append(queue, p)
			}
		}
	}
	return nil
}

// Verdict is what a task's parents say about running it now.
type Verdict struct {
	// Waiting lists the parents not yet ended (or not found: a retried
	// parent is in incoming/ for a moment).
	Waiting []string
	// Broken is the first parent that ended failed or canceled, and
	// BrokenState its state: the task must fail, naming it.
	Broken      string
	BrokenState taskfile.State
}

// Ready reports whether every parent ended success.
func (v Verdict) Ready() bool { return len(v.Waiting) == 0 && v.Broken == "" }

// Reason is the one line a waiting task shows ("waits for outline-3"),
// or a broken one fails with; "" when ready.
func (v Verdict) Reason() string {
	switch {
	case v.Broken != "":
		return fmt.Sprintf("parent %s %s: a chained task does not run without its parent's result (retry %s to run both)",
			v.Broken, v.BrokenState, v.Broken)
	case len(v.Waiting) > 0:
		return "waits for " + strings.Join(v.Waiting, ", ")
	}
	return ""
}

// Judge reads where each of parents is through state ("" when none has
// it) and says whether they let their child run.
func Judge(parents []string, state func(id string) taskfile.State) Verdict {
	var v Verdict
	for _, p := range parents {
		switch s := state(p); s {
		case taskfile.StateSuccess:
		case taskfile.StateFailed, taskfile.StateCanceled:
			if v.Broken == "" {
				v.Broken, v.BrokenState = p, s
			}
		default:
			v.Waiting = append(v.Waiting, p)
		}
	}
	return v
}

// Fill returns content with each {{ID.result}} and {{ID.thinking}}
// replaced by that parent's result or reasoning exactly as its record
// holds it: one pass, so text a result brings in is never filled again.
// A reference to a task not in done is left as written (Check refuses
// one at intake).
func Fill(content string, done map[string]*taskfile.Task) string {
	return refRe.ReplaceAllStringFunc(content, func(ref string) string {
		m := refRe.FindStringSubmatch(ref)
		p, ok := done[m[1]]
		if !ok {
			return ref
		}
		if m[2] == "thinking" {
			return p.Reasoning
		}
		return p.Result
	})
}
