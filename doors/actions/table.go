package actions

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spoolgate/spoolgate/doors/tableimport"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// RowDrop is a table row checked as a task: its drop, or why not.
type RowDrop struct {
	N    int
	Drop Drop
	// Extra are the row's follow-up (ID-f, followUp: ID) and chained
	// task (ID-c, after the row's last), dropped after Drop.
	Extra []Drop
	Err   string // "" when the row is a valid task
}

// RowTaskID is the taskId of a table's row N in batch: the same rows of
// the same batch submitted twice name the same tasks, and the second
// submit is refused as a duplicate instead of run again.
// A batch name that is not all letters, digits, - and _ (春季选题)
// gives its ASCII part and a hash of the whole name: b-1a2b3c4d-r2.
func RowTaskID(batch string, n int) string {
	p := IDPrefix(batch, "")
	if p != batch || p == "" {
		sum := sha256.Sum256([]byte(batch))
		p = strings.Trim(p, "-")
		if p == "" {
			p = "b"
		}
		p = fmt.Sprintf("%s-%x", p, sum[:4])
	}
	return fmt.Sprintf("%s-r%d", p, n)
}

// TableDrops checks every row as `spoolgate submit` checks a task; a
// row's task id is RowTaskID, its batch batch.
func TableDrops(st *spool.Store, batch string, rows []tableimport.Row) []RowDrop {
	out := make([]RowDrop, len(rows))
	for i, r := range rows {
		out[i].N = r.N
		if r.Err != "" {
			out[i].Err = r.Err
			continue
		}
		id := RowTaskID(batch, r.N)
		tasks := []*taskfile.Task{{TaskID: id, Model: r.Model, Content: r.Content, Prompt: r.Prompt, Title: r.Title,
			Batch: batch, Output: r.Output, Priority: taskfile.Priority(r.Priority)}}
		last := id
		if r.FollowUp != "" {
			last = id + "-f"
			tasks = append(tasks, &taskfile.Task{TaskID: last, Model: r.Model, FollowUp: id, Content: r.FollowUp, Batch: batch, Priority: taskfile.Priority(r.Priority)})
		}
		if r.ThenModel != "" {
			then := r.Then
			if then == "" {
				then = "{{result}}"
			}
			tasks = append(tasks, &taskfile.Task{TaskID: id + "-c", Model: r.ThenModel, After: []string{last},
				Content: strings.ReplaceAll(then, "{{result}}", "{{"+last+".result}}"), Batch: batch, Priority: taskfile.Priority(r.Priority)})
		}
		src := fmt.Sprintf("row %d", r.N)
		for j, t := range tasks {
			d, err := CheckTask(st, src, t, "")
			if err == nil && waiting(st, d) {
				err = &Refused{Field: "taskId", Msg: fmt.Sprintf("%s: taskId %q is already waiting in %s/incoming (a duplicate)", src, d.ID, d.Lane)}
			}
			if err != nil {
				out[i].Err, out[i].Extra = err.Error(), nil
				var rf *Refused
				if errors.As(err, &rf) {
					out[i].Err = rf.Msg
				}
				break
			}
			if j == 0 {
				out[i].Drop = d
			} else {
				out[i].Extra = append(out[i].Extra, d)
			}
		}
	}
	return out
}

// waiting reports whether d's task is already in its lane's incoming/.
func waiting(st *spool.Store, d Drop) bool {
	_, err := os.Lstat(filepath.Join(st.Layout.Lane(d.Lane, taskfile.DirIncoming), d.ID+".yaml"))
	return err == nil
}

// DropRows drops the valid rows' tasks; a row refused now (dropped by
// someone else meanwhile) gets its Err. It returns how many were dropped.
func DropRows(st *spool.Store, rows []RowDrop) (int, error) {
	n := 0
	for i := range rows {
		if rows[i].Err != "" {
			continue
		}
		if err := DropOne(st, rows[i].Drop); err != nil {
			var rf *Refused
			if errors.As(err, &rf) {
				rows[i].Err = rf.Msg
				continue
			}
			return n, err
		}
		n++
		// The row's follow-up and chained task, after it: intake finds
		// each one's parent among the drops or in the lanes.
		for _, d := range rows[i].Extra {
			if err := DropOne(st, d); err != nil {
				var rf *Refused
				if errors.As(err, &rf) {
					rows[i].Err = rf.Msg
					break
				}
				return n, err
			}
		}
	}
	return n, nil
}
