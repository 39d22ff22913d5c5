package cli

import (
	"fmt"
	"strings"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// taskRef is a task named on the command line, as LANE/ID or as a bare
// ID, and where it was found.
type taskRef struct {
	lane taskfile.Kind // "" when a bare ID was found in no lane
	id   string
	dir  string // the task folder holding it; "" when not found
}

// ref is r as the actions package names a task.
func (r taskRef) ref() actions.Ref { return actions.Ref{Lane: r.lane, ID: r.id, Dir: r.dir} }

// String is LANE/ID (or the bare ID when no lane is known), safe to print.
func (r taskRef) String() string {
	if r.lane == "" {
		return safetext.Line(r.id)
	}
	return safetext.Line(string(r.lane) + "/" + r.id)
}

// resolveTasks finds the task each arg names, before the command acts on
// any. "LANE/ID" (api/launch-001) looks in that lane only. A bare ID looks
// in both lanes; one found in both is refused as bad usage (exit 2) with
// both candidates named, so a command never acts on the other lane's task
// by accident. A task found nowhere comes back with dir "".
func resolveTasks(cmd string, L spool.Layout, args []string) ([]taskRef, error) {
	refs := make([]taskRef, 0, len(args))
	for _, a := range args {
		r, err := resolveTask(cmd, L, a)
		if err != nil {
			return nil, err
		}
		refs = append(refs, r)
	}
	return refs, nil
}

func resolveTask(cmd string, L spool.Layout, arg string) (taskRef, error) {
	lanes, id := taskfile.Kinds, arg
	if l, rest, ok := strings.Cut(arg, "/"); ok {
		k := taskfile.Kind(l)
		if !k.Valid() {
			return taskRef{}, usagef("%s: %q: %q is not a lane (web or api); name a task as ID or LANE/ID", cmd, arg, l)
		}
		lanes, id = []taskfile.Kind{k}, rest
	}
	if !taskfile.ValidTaskID(id) {
		return taskRef{}, usagef("%s: %q is not a taskId (name a task as ID or LANE/ID)", cmd, arg)
	}
	var found []taskRef
	for _, k := range lanes {
		if d := L.Locate(k, id); d != "" {
			found = append(found, taskRef{lane: k, id: id, dir: d})
		}
	}
	switch len(found) {
	case 0:
		r := taskRef{id: id}
		if len(lanes) == 1 {
			r.lane = lanes[0]
		}
		return r, nil
	case 1:
		return found[0], nil
	}
	var cands []string
	for _, f := range found {
		cands = append(cands, fmt.Sprintf("%s (%s)", f, taskfile.FolderState[f.dir]))
	}
	return taskRef{}, usagef("%s: %s is in both lanes: %s; name one as LANE/ID", cmd, safetext.Line(id), strings.Join(cands, " and "))
}
