package report

import (
	"path/filepath"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// resultFolder is one folder of task files that results reads.
type resultFolder struct {
	dir   string // the task folder it stands for: pending, done, ...
	path  string
	month string // the archive month, "" for the lane's own folders
}

// resultFolders lists the task folders of lane k, then, with archive, the
// final folders of each month of its archive.
func resultFolders(L spool.Layout, k taskfile.Kind, archive bool) []resultFolder {
	var out []resultFolder
	for _, dir := range taskfile.TaskDirs {
		out = append(out, resultFolder{dir: dir, path: L.Lane(k, dir)})
	}
	if !archive {
		return out
	}
	for _, m := range L.ArchiveMonths(k) {
		for _, dir := range taskfile.FinalDirs {
			out = append(out, resultFolder{dir: dir, path: filepath.Join(m, dir), month: filepath.Base(m)})
		}
	}
	return out
}

// mayBeOfBatch reports whether the task file at p may belong to batch:
// false only when the line scan reads it surely and finds another batch,
// so that looking for one batch in a large archive decodes only its files.
func mayBeOfBatch(p, batch string) bool {
	data, _, err := fsx.ReadOwn(p, taskfile.MaxRecordSize)
	if err != nil {
		return true // the full read reports it
	}
	s, ok := taskfile.ScanSummary(data)
	return !ok || s.Batch == batch
}
