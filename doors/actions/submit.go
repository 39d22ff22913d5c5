package actions

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Drop is one task checked as intake will check it, ready to be dropped.
type Drop struct {
	Src  string // file name, "-", "flags", "form" or "row N"
	Lane taskfile.Kind
	ID   string
	Data []byte
	// After is the tasks it waits for (a chain): ParentsFirst drops those
	// of the same submission before it, so intake finds them.
	After []string
}

// CheckDrop validates one task file's bytes exactly as intake will; name
// gives the taskId when the file has none. A refusal is a *Refused whose
// Field names the task field at fault when one is known.
func CheckDrop(st *spool.Store, src, name string, data []byte, lane taskfile.Kind) (Drop, error) {
	t, err := taskfile.DecodeTask(data)
	if err != nil {
		return Drop{}, refusedf("", "%s: %v", src, err)
	}
	t.ResetForIntake()
	if t.TaskID == "" {
		t.TaskID = taskfile.TrimTaskExt(name)
	}
	resolved, rej := config.ResolveLane(st.Cfg, t, lane)
	if rej == nil {
		rej = config.Validate(st.Cfg, t, resolved)
	}
	if rej == nil {
		// Intake looks for relative attachments beside the drop, in the
		// lane's incoming/, where this drop goes.
		rej = st.CheckAttachments(t, st.Layout.Lane(resolved, taskfile.DirIncoming))
	}
	if rej != nil {
		field, _, _ := strings.Cut(rej.Msg, ":") // the validator names the field first
		return Drop{}, &Refused{Field: field, Msg: fmt.Sprintf("%s: %s", src, rej.Msg)}
	}
	if where := st.Layout.Locate(resolved, t.TaskID); where != "" {
		hint := ""
		if where == taskfile.DirFailed || where == taskfile.DirCanceled {
			hint = fmt.Sprintf(": run `spoolgate retry %s/%s` to run it again", resolved, t.TaskID)
		}
		return Drop{}, &Refused{Field: "taskId", Msg: fmt.Sprintf("%s: taskId %q already exists in %s/%s/%s", src, t.TaskID, resolved, where, hint)}
	}
	// The file keeps its bytes; its name carries the taskId when the file
	// does not, so intake derives the same id.
	return Drop{Src: src, Lane: resolved, ID: t.TaskID, Data: data, After: t.After}, nil
}

// CheckTask is CheckDrop for a task built from fields (flags, the form,
// a table's row).
func CheckTask(st *spool.Store, src string, t *taskfile.Task, lane taskfile.Kind) (Drop, error) {
	data, err := t.Encode()
	if err != nil {
		return Drop{}, refusedf("", "%s: %v", src, err)
	}
	return CheckDrop(st, src, t.TaskID+".yaml", data, lane)
}

// Duplicates says which drop names a task another drop names too, or nil.
func Duplicates(drops []Drop) error {
	seen := map[string]string{}
	for _, d := range drops {
		key := string(d.Lane) + "/" + d.ID
		if prev, ok := seen[key]; ok {
			return &Refused{Field: "taskId", Msg: fmt.Sprintf("%s: taskId %q is also given by %s", d.Src, d.ID, prev)}
		}
		seen[key] = d.Src
	}
	return nil
}

// ParentsFirst orders drops so that each comes after those of its
// parents (after:) among them, keeping the given order otherwise: a
// daemon takes drops in as they arrive, and refuses a task whose parent
// is nowhere yet. Drops that wait for each other in a cycle are a
// *Refused naming the cycle: whichever went first, intake would find the
// other missing and name no cycle at all, so the submission says it.
func ParentsFirst(drops []Drop) ([]Drop, error) {
	byID := map[string]int{}
	for i, d := range drops {
		byID[d.ID] = i
	}
	out := make([]Drop, 0, len(drops))
	state := make([]int, len(drops)) // 0 new, 1 on the path, 2 placed
	var path []int                   // the drops on the path, for a cycle's line
	var place func(i int) error
	place = func(i int) error {
		switch state[i] {
		case 2:
			return nil
		case 1:
			at := slices.Index(path, i)
			ids := []string{}
			for _, j := range path[at:] {
				ids = append(ids, drops[j].ID)
			}
			ids = append(ids, drops[i].ID)
			return refusedf("after", "%s: after: a cycle: %s", drops[path[at]].Src, strings.Join(ids, " waits for "))
		}
		state[i] = 1
		path = append(path, i)
		for _, p := range drops[i].After {
			if j, ok := byID[p]; ok && j != i { // a task that waits for itself: intake says so
				if err := place(j); err != nil {
					return err
				}
			}
		}
		path = path[:len(path)-1]
		state[i] = 2
		out = append(out, drops[i])
		return nil
	}
	for i := range drops {
		if err := place(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DropOne writes d into its lane's incoming/ under a temp name and moves
// it in; a task of that id already waiting there is a *Refused.
func DropOne(st *spool.Store, d Drop) error {
	if err := st.Layout.Create(); err != nil {
		return err
	}
	if _, err := st.Submit(st.Layout.Lane(d.Lane, taskfile.DirIncoming), d.ID, d.Data); err != nil {
		if errors.Is(err, os.ErrExist) {
			return &Refused{Field: "taskId", Msg: fmt.Sprintf("%s: %v", d.Src, err)}
		}
		return fmt.Errorf("%s: %w", d.Src, err)
	}
	return nil
}
