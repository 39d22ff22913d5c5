package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/doors/tableimport"
	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
)

// tableFlags are submit's flags for a table (submit --table FILE).
type tableFlags struct {
	file, template                               *string
	contentCol, promptCol, modelCol, priorityCol *string
	outputCol, followUpCol, thenModel, then      *string
	titleCol                                     *string
}

// submitTable is `spoolgate submit --table FILE`: the console's import
// from the shell. Every row is checked as a task; the refused ones are
// listed with their row numbers on stderr, the valid ones dropped as
// batch (default: the file's name), each as BATCH-rN, so the same rows
// submitted twice are refused as duplicates. Exit 1 when a row was refused.
func submitTable(env *Env, st *spool.Store, tf tableFlags, batch, model string) error {
	data, _, err := fsx.ReadRegular(*tf.file, tableimport.MaxFile)
	if err != nil {
		return usagef("submit --table %s: %v", *tf.file, err)
	}
	t, err := tableimport.Read(data)
	if err != nil {
		return usagef("submit --table %s: %v", *tf.file, err)
	}
	if batch == "" {
		base := filepath.Base(*tf.file)
		batch = strings.TrimSuffix(base, filepath.Ext(base))
	}
	rows, err := tableimport.Mapping{Template: *tf.template, ContentCol: *tf.contentCol, PromptCol: *tf.promptCol,
		ModelCol: *tf.modelCol, PriorityCol: *tf.priorityCol, OutputCol: *tf.outputCol, Model: model,
		FollowUpCol: *tf.followUpCol, ThenModel: *tf.thenModel, Then: *tf.then, TitleCol: *tf.titleCol}.Rows(t)
	if err != nil {
		return usagef("submit --table %s: %v", *tf.file, err)
	}
	if err := st.Layout.Create(); err != nil {
		return err
	}
	drops := actions.TableDrops(st, batch, rows)
	n, err := actions.DropRows(st, drops)
	bad := 0
	var ids []string
	for _, d := range drops {
		if d.Err != "" {
			bad++
			fmt.Fprintf(env.Stderr, "row %d: %s\n", d.N, safetext.Line(strings.TrimPrefix(d.Err, fmt.Sprintf("row %d: ", d.N))))
			continue
		}
		for _, x := range append([]actions.Drop{d.Drop}, d.Extra...) {
			ids = append(ids, string(x.Lane)+"/"+x.ID)
			fmt.Fprintln(env.Stdout, safetext.Line(x.ID))
		}
	}
	if len(ids) > 0 {
		cliAudit(st, env, "import", ids, batch, filepath.Base(*tf.file))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "%s (%s): %d of %d rows submitted as batch %s, %d refused\n", safetext.Line(*tf.file), t.Format, n, len(drops), safetext.Line(batch), bad)
	if bad > 0 {
		return &exitErr{code: 1}
	}
	return nil
}
