package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func init() {
	register("retry", "put failed or canceled tasks (ID, LANE/ID, or --batch B --failed) back to run again", cmdRetry)
}

// cmdRetry moves failed or canceled tasks back into their lane's
// incoming/; intake clears what spoolgate wrote and runs each as new under
// the same taskId. The task's log keeps the history of earlier attempts.
// Tasks are named as ID or LANE/ID, or chosen as every failed task of a
// batch (--batch B --failed, narrowed by --class C).
func cmdRetry(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("retry", &c)
	batch := fs.String("batch", "", "with --failed: retry every failed task of this batch, in both lanes")
	failed := fs.Bool("failed", false, "with --batch: choose the batch's failed tasks")
	class := fs.String("class", "", "with --failed: only tasks that failed with this errorClass (e.g. transient)")
	ids, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	bulk := *batch != "" || *failed || *class != ""
	switch {
	case bulk && len(ids) > 0:
		return usagef("retry: give tasks or --batch B --failed, not both")
	case bulk && (*batch == "" || !*failed):
		return usagef("retry: --batch B and --failed go together (--class narrows them)")
	case !bulk && len(ids) == 0:
		return usagef("retry: give one or more tasks (ID or LANE/ID), or --batch B --failed")
	}
	if *class != "" && !knownClass(taskfile.ErrorClass(*class)) {
		return usagef("retry: --class %q: want one of %s", *class, classNames())
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	st := c.store
	var refs []taskRef
	if bulk {
		if refs, err = failedOfBatch(cfg, *batch, taskfile.ErrorClass(*class)); err != nil {
			return err
		}
		if len(refs) == 0 {
			fmt.Fprintf(env.Stdout, "no failed tasks in batch %q%s\n", *batch, classSuffix(*class))
			return nil
		}
	} else if refs, err = resolveTasks("retry", st.Layout, ids); err != nil {
		return err
	}
	// Named tasks are all checked before any moves (a refused one changes
	// nothing). A batch's tasks come from files anyone may drop: one whose
	// taskId cannot name its file (`../done/x`), or that is not where its
	// id says, is refused with its reason and the others go on.
	var errs int
	ok := refs[:0:0]
	for _, r := range refs {
		err := checkRetry(st, r)
		if err == nil {
			ok = append(ok, r)
			continue
		}
		if !bulk {
			return err
		}
		fmt.Fprintf(env.Stderr, "spoolgate: %s\n", safetext.Text(err.Error()))
		errs++
	}
	var moved []string
	defer func() {
		if len(moved) > 0 {
			detail := ""
			if bulk {
				detail = fmt.Sprintf("%d of %d", len(moved), len(refs))
			}
			cliAudit(st, env, "retry", moved, *batch, detail)
		}
	}()
	for _, r := range ok {
		if err := retryTask(st, r); err != nil {
			if !bulk {
				return err
			}
			fmt.Fprintf(env.Stderr, "spoolgate: %s\n", safetext.Text(err.Error()))
			errs++
			continue
		}
		fmt.Fprintf(env.Stdout, "%s: back to %s/incoming\n", r, r.lane)
		moved = append(moved, r.ref().String())
	}
	if errs > 0 {
		return &exitErr{code: 1, msg: fmt.Sprintf("retry: %d of %d tasks not moved", errs, len(refs))}
	}
	return nil
}

// checkRetry says why r cannot be retried (a usage error), or nil.
func checkRetry(st *spool.Store, r taskRef) error { return asUsage(actions.CheckRetry(st, r.ref())) }

// retryTask moves one failed or canceled task back to its lane's incoming/.
func retryTask(st *spool.Store, r taskRef) error { return actions.Retry(st, r.ref()) }

// failedOfBatch lists the failed tasks of batch in both lanes.
func failedOfBatch(cfg *config.Config, batch string, class taskfile.ErrorClass) ([]taskRef, error) {
	refs, err := actions.FailedOfBatch(cfg, batch, class)
	out := make([]taskRef, len(refs))
	for i, r := range refs {
		out[i] = taskRef{lane: r.Lane, id: r.ID, dir: r.Dir}
	}
	return out, err
}

var errorClasses = []taskfile.ErrorClass{taskfile.ClassInvalid, taskfile.ClassDuplicate, taskfile.ClassTransient, taskfile.ClassPermanent,
	taskfile.ClassStale, taskfile.ClassAccount, taskfile.ClassEnvironment, taskfile.ClassCanceled}

func knownClass(c taskfile.ErrorClass) bool { return slices.Contains(errorClasses, c) }

func classNames() string {
	names := make([]string, len(errorClasses))
	for i, k := range errorClasses {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

func classSuffix(class string) string {
	if class == "" {
		return ""
	}
	return " with errorClass " + class
}
