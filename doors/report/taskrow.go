package report

import (
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TaskRow is one task's row, as `spoolgate results` shows it: the task t
// of lane k in folder dir (pending, running, done...).
func TaskRow(L spool.Layout, k taskfile.Kind, dir string, t *taskfile.Task) Row {
	r := Row{TaskID: t.TaskID, Lane: k, State: string(taskfile.FolderState[dir])}
	fillRow(&r, L, t)
	r.ArtifactFiles = artifactFiles(L.ArtifactBase(L.Lane(k, dir), t), t)
	return r
}
