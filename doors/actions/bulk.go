package actions

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Bulk actions: one operation (cancel, retry, priority) on a selection of
// tasks, planned first so the operator confirms a list that says what
// will happen to each task (and which are skipped, and why), then applied
// step by step through the single-task actions above.

// MaxBulk is the most tasks one bulk action takes: a page of a batch's
// list is 50; a form that names more is not one an operator ticked.
const MaxBulk = 500

// BulkOps are the operations a selection can get.
var BulkOps = []string{"cancel", "retry", "priority"}

// Step is one selected task in a bulk plan.
type Step struct {
	Ref  Ref
	Task *taskfile.Task // nil when its file could not be read
	// Skip is why the operation does not apply, "" when it does: the
	// task's state ("success", "pending", ...) or "missing".
	Skip string
	// Again: a retry of a permanent failure (a content filter, a refused
	// prompt), which will most likely fail the same way.
	Again bool
}

// ParseSelection reads the form's LANE/ID values into refs: each one
// checked, duplicates dropped, at most MaxBulk.
func ParseSelection(st *spool.Store, values []string) ([]Ref, error) {
	if len(values) == 0 {
		return nil, refusedf("task", "select at least one task")
	}
	if len(values) > MaxBulk {
		return nil, refusedf("task", "at most %d tasks at once, not %d", MaxBulk, len(values))
	}
	seen := map[string]bool{}
	var refs []Ref
	for _, v := range values {
		lane, id, _ := strings.Cut(v, "/")
		k := taskfile.Kind(lane)
		if !k.Valid() || !taskfile.ValidTaskID(id) {
			return nil, refusedf("task", "not a task: %q", v)
		}
		if seen[v] {
			continue
		}
		seen[v] = true
		refs = append(refs, Locate(st, k, id))
	}
	return refs, nil
}

// PlanBulk says what op would do to each of refs.
func PlanBulk(st *spool.Store, op string, refs []Ref) []Step {
	steps := make([]Step, 0, len(refs))
	for _, r := range refs {
		s := Step{Ref: r}
		if r.Dir == "" {
			s.Skip = "missing"
			steps = append(steps, s)
			continue
		}
		if t, err := spool.ReadTaskFile(st.Layout.TaskPath(r.Lane, r.Dir, r.ID)); err == nil {
			s.Task = t
		}
		state := string(taskfile.FolderState[r.Dir])
		switch op {
		case "cancel":
			if r.Dir != taskfile.DirPending && r.Dir != taskfile.DirRunning {
				s.Skip = state
			}
		case "priority":
			if r.Dir != taskfile.DirPending {
				s.Skip = state
			}
		case "retry":
			if r.Dir != taskfile.DirFailed && r.Dir != taskfile.DirCanceled {
				s.Skip = state
			}
			s.Again = s.Skip == "" && s.Task != nil && s.Task.ErrorClass == taskfile.ClassPermanent
		}
		steps = append(steps, s)
	}
	return steps
}

// ApplyBulk runs op on every step that applies, and returns the refs it
// was done to; one task's failure (it finished meanwhile, say) does not
// stop the others and is joined into err.
func ApplyBulk(st *spool.Store, op string, level taskfile.Priority, steps []Step) (done []Ref, err error) {
	if op == "priority" && (level == "" || !level.Valid()) {
		return nil, refusedf("priority", "priority: %q is not high, normal or low", level)
	}
	for _, s := range steps {
		if s.Skip != "" {
			continue
		}
		var e error
		switch op {
		case "cancel":
			var out CancelOutcome
			if out, e = Cancel(st, s.Ref); e == nil && out != CancelRequested {
				e = fmt.Errorf("cancel %s: it ended meanwhile", s.Ref)
			}
		case "retry":
			if e = CheckRetry(st, s.Ref); e == nil {
				e = Retry(st, s.Ref)
			}
		case "priority":
			e = SetPriority(st, s.Ref, level)
		default:
			return nil, refusedf("op", "%q is not cancel, retry or priority", op)
		}
		if e != nil {
			err = errors.Join(err, e)
			continue
		}
		done = append(done, s.Ref)
	}
	return done, err
}
