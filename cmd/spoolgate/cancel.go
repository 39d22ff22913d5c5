package main

import (
	"context"
	"fmt"

	"github.com/spoolgate/spoolgate/spool"
)

func init() {
	register("cancel", "cancel tasks: pending at once, running at the next checkpoint", cmdCancel)
}

// cmdCancel drops a request file in <lane>/cancel/ for each task; the
// daemon that holds the task acts on it, so this works from any machine
// that sees the spool.
func cmdCancel(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("cancel", &c)
	ids, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return usagef("cancel: give one or more taskIds")
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	st := spool.NewStore(cfg, nil)
	var failed int
	for _, id := range ids {
		if !spool.ValidTaskID(id) {
			return usagef("cancel: %q is not a taskId", id)
		}
		k, where := st.L.LocateAny(id)
		switch where {
		case "":
			fmt.Fprintf(env.Stderr, "%s: no such task in %s\n", id, st.L.Root)
			failed++
		case spool.DirPending, spool.DirRunning:
			if err := spool.WriteFileAtomic(st.L.CancelPath(k, id), nil); err != nil {
				return fmt.Errorf("cancel %s: %w", id, err)
			}
			when := "at once"
			if where == spool.DirRunning {
				when = "at its next checkpoint"
			}
			fmt.Fprintf(env.Stdout, "%s: cancel requested (%s, %s)\n", id, where, when)
		default:
			fmt.Fprintf(env.Stdout, "%s: already %s, nothing to cancel\n", id, spool.FolderState[where])
		}
	}
	if failed > 0 {
		return &exitErr{code: 1}
	}
	return nil
}
