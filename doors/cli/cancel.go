package cli

import (
	"context"
	"fmt"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func init() {
	register("cancel", "cancel tasks (ID or LANE/ID): pending at once, running at the next checkpoint", cmdCancel)
}

// cmdCancel drops a request file in <lane>/cancel/ for each task; the
// daemon that holds the task acts on it, so this works from any machine
// that sees the spool. Every argument is resolved before any request is
// written: an ambiguous ID cancels nothing.
func cmdCancel(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("cancel", &c)
	ids, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return usagef("cancel: give one or more tasks (ID or LANE/ID)")
	}
	if _, err := c.load(); err != nil {
		return err
	}
	st := c.store
	refs, err := resolveTasks("cancel", st.Layout, ids)
	if err != nil {
		return err
	}
	var failed int
	var requested []string
	defer func() {
		if len(requested) > 0 {
			cliAudit(st, env, "cancel", requested, "", "")
		}
	}()
	for _, r := range refs {
		out, err := actions.Cancel(st, r.ref())
		if err != nil {
			return err
		}
		switch out {
		case actions.CancelNotFound:
			fmt.Fprintf(env.Stderr, "%s: no such task in %s\n", r, st.Layout.Root)
			failed++
		case actions.CancelRequested:
			when := "at once"
			if r.dir == taskfile.DirRunning {
				when = "at its next checkpoint"
			}
			fmt.Fprintf(env.Stdout, "%s: cancel requested (%s, %s)\n", r, r.dir, when)
			requested = append(requested, r.ref().String())
		default:
			fmt.Fprintf(env.Stdout, "%s: already %s, nothing to cancel\n", r, taskfile.FolderState[r.dir])
		}
	}
	if failed > 0 {
		return &exitErr{code: 1}
	}
	return nil
}
