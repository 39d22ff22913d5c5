package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spoolgate/spoolgate/spool"
)

func init() { register("retry", "put failed or canceled tasks back to run again", cmdRetry) }

// cmdRetry moves a failed or canceled task back into its lane's incoming/;
// intake clears what spoolgate wrote and runs it as new under the same
// taskId. The task's log keeps the history of earlier attempts.
func cmdRetry(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("retry", &c)
	ids, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return usagef("retry: give one or more taskIds")
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	st := spool.NewStore(cfg, nil)
	for _, id := range ids {
		if !spool.ValidTaskID(id) {
			return usagef("retry: %q is not a taskId", id)
		}
		k, where := st.L.LocateAny(id)
		switch where {
		case spool.DirFailed, spool.DirCanceled:
		case "":
			return usagef("retry: %s: no such task", id)
		default:
			return usagef("retry: %s is %s: only failed or canceled tasks can be retried", id, spool.FolderState[where])
		}
		if _, err := os.Lstat(filepath.Join(st.L.Lane(k, where), id+".error")); err == nil {
			return usagef("retry: %s is a rejected drop (see %s.error): fix it and drop it again", id, id)
		}
		if err := spool.RenameNoReplace(st.L.TaskPath(k, where, id), st.L.TaskPath(k, spool.DirIncoming, id)); err != nil {
			return fmt.Errorf("retry %s: %w", id, err)
		}
		_ = st.AppendLog(k, id, "retry requested: moved from "+where+"/ back to incoming/")
		fmt.Fprintf(env.Stdout, "%s: back to %s/incoming\n", id, k)
	}
	return nil
}
