package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func init() {
	register("submit", "validate tasks as the daemon would, then drop them atomically", cmdSubmit)
}

func cmdSubmit(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("submit", &c)
	laneFlag := fs.String("lane", "", "web or api (default: the model's kind)")
	model := fs.String("model", "", "build a task from flags: the model")
	content := fs.String("content", "", "build a task from flags: the user content")
	batch := fs.String("batch", "", "batch label (with --model/--content)")
	title := fs.String("title", "", "the task's name in the console and results, one line (with --model/--content)")
	prompt := fs.String("prompt", "", "system prompt (with --model/--content)")
	output := fs.String("output", "", "output path under <spool>/output (with --model/--content)")
	id := fs.String("id", "", "taskId (with --model/--content; default generated)")
	priority := fs.String("priority", "", "high, normal or low (with --model/--content)")
	tf := tableFlags{file: fs.String("table", "", "a CSV or XLSX table: one task per row (see --template and the --*-col flags)"),
		template:    fs.String("template", "", "with --table: the content, {{COLUMN}} replaced by the row's cell"),
		contentCol:  fs.String("content-col", "", "with --table: the column of the content (instead of --template)"),
		promptCol:   fs.String("prompt-col", "", "with --table: the column of the prompt"),
		modelCol:    fs.String("model-col", "", "with --table: the column of the model (default --model)"),
		priorityCol: fs.String("priority-col", "", "with --table: the column of the priority"),
		outputCol:   fs.String("output-col", "", "with --table: the column of the output path"),
		titleCol:    fs.String("title-col", "", "with --table: the column naming each row's task (its title:; default with --template: the cells the template names)"),
		followUpCol: fs.String("followup-col", "", "with --table: the column of a second message sent in the same chat after the row's (a follow-up task ID-f)"),
		thenModel:   fs.String("then-model", "", "with --table: chain each row to a second task on this model (ID-c), after the row's last answer"),
		then:        fs.String("then", "", "with --then-model: the chained task's content, {{result}} standing for the row's last answer (default: the answer alone)")}
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if _, err := c.load(); err != nil {
		return err
	}
	lane := taskfile.Kind(*laneFlag)
	if lane != "" && !lane.Valid() {
		return usagef("--lane %q: want web or api", lane)
	}
	st := c.store
	if *tf.file != "" {
		if len(files) > 0 || *content != "" || *id != "" || *prompt != "" || *output != "" || *priority != "" || *title != "" || lane != "" {
			return usagef("submit --table: give the table's columns (--*-col) or --template; --model and --batch only")
		}
		return submitTable(env, st, tf, *batch, *model)
	}
	if *title != "" && *model == "" && *content == "" {
		return usagef("--title: only with --model/--content (a task file has its own title:)")
	}
	var drops []actions.Drop
	if *model != "" || *content != "" {
		if len(files) > 0 {
			return usagef("give files or --model/--content, not both")
		}
		t := &taskfile.Task{TaskID: *id, Model: *model, Content: *content, Batch: *batch, Title: *title, Prompt: *prompt, Output: *output, Priority: taskfile.Priority(*priority)}
		if t.TaskID == "" {
			t.TaskID = newTaskID(*batch)
		}
		data, err := t.Encode()
		if err != nil {
			return err
		}
		d, err := checkDrop(st, "flags", t.TaskID+".yaml", data, lane)
		if err != nil {
			return err
		}
		drops = append(drops, d)
	} else {
		if *priority != "" {
			return usagef("submit: --priority goes with --model/--content; in a file, write priority: high")
		}
		if len(files) == 0 {
			return usagef("submit: give FILE..., - for stdin, or --model and --content")
		}
		for _, f := range files {
			var data []byte
			name := filepath.Base(f)
			if f == "-" {
				data, err = io.ReadAll(io.LimitReader(env.Stdin, taskfile.MaxTaskSize+1))
				name = newTaskID("stdin") + ".yaml"
			} else {
				data, _, err = fsx.ReadRegular(f, taskfile.MaxTaskSize)
			}
			if err != nil {
				return usagef("%s: %v", f, err)
			}
			d, err := checkDrop(st, f, name, data, lane)
			if err != nil {
				return err
			}
			drops = append(drops, d)
		}
	}
	if err := actions.Duplicates(drops); err != nil {
		return asUsage(err)
	}
	if drops, err = actions.ParentsFirst(drops); err != nil {
		return asUsage(err)
	}
	// All valid: now drop them, each written under a temp name and moved in.
	if err := st.Layout.Create(); err != nil {
		return err
	}
	var ids []string
	defer func() {
		if len(ids) > 0 { // what was dropped, also when a later drop failed
			cliAudit(st, env, "submit", ids, *batch, "")
		}
	}()
	for _, d := range drops {
		if err := actions.DropOne(st, d); err != nil {
			return asUsage(err)
		}
		ids = append(ids, string(d.Lane)+"/"+d.ID)
		fmt.Fprintln(env.Stdout, safetext.Line(d.ID))
	}
	return nil
}

// checkDrop validates one task exactly as intake will (actions.CheckDrop).
func checkDrop(st *spool.Store, src, name string, data []byte, lane taskfile.Kind) (actions.Drop, error) {
	d, err := actions.CheckDrop(st, src, name, data, lane)
	return d, asUsage(err)
}

// newTaskID makes an id for a task built from flags or stdin.
func newTaskID(prefix string) string { return actions.NewTaskID(prefix) }

// asUsage makes an action's refusal a usage error (exit 2).
func asUsage(err error) error {
	var r *actions.Refused
	if errors.As(err, &r) {
		return &UsageError{Msg: r.Msg}
	}
	return err
}
