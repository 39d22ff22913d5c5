package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func init() {
	register("priority", "change a pending task's priority: priority ID|LANE/ID high|normal|low", cmdPriority)
}

// cmdPriority rewrites a pending task's priority (durably, through the
// spool) and leaves <lane>/priority/ID, by which every daemon of the spool
// reorders its queue at its next look.
func cmdPriority(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("priority", &c)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("priority: want ID (or LANE/ID) and a level: high, normal or low")
	}
	level := taskfile.Priority(pos[1])
	if level == "" || !level.Valid() {
		return usagef("priority: %q is not high, normal or low", pos[1])
	}
	if _, err := c.load(); err != nil {
		return err
	}
	st := c.store
	r, err := resolveTask("priority", st.Layout, pos[0])
	if err != nil {
		return err
	}
	if err := actions.SetPriority(st, r.ref(), level); err != nil {
		var rf *actions.Refused
		if errors.As(err, &rf) || errors.Is(err, actions.ErrNotPending) {
			return &exitErr{code: 1, msg: err.Error()}
		}
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: priority %s\n", r, level)
	cliAudit(st, env, "priority", []string{r.ref().String()}, "", string(level))
	return nil
}
