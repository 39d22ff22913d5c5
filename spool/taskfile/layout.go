package taskfile

import (
	"io/fs"
	"strings"
)

// DirPriority holds a lane's reindex requests: <lane>/priority/ID asks a
// running daemon to read pending/ID again into its index.
const DirPriority = "priority"

// DirOutputs holds the files each task's model generated with its answer,
// <lane>/outputs/ID/NN.ext (the task file's artifacts: list).
const DirOutputs = "outputs"

// DirArchive holds a lane's finished tasks past their retention:
// <lane>/archive/YYYY-MM/{done,failed,canceled,logs}/, by the month (UTC)
// in which each task finished.
const DirArchive = "archive"

// FinalDirs are the folders of finished tasks.
var FinalDirs = []string{DirDone, DirFailed, DirCanceled}

// Folder names inside each lane.
const (
	DirIncoming = "incoming"
	DirPending  = "pending"
	DirRunning  = "running"
	DirDone     = "done"
	DirFailed   = "failed"
	DirCanceled = "canceled"
	DirCancel   = "cancel"
	DirLogs     = "logs"
	PausedFile  = "paused"
)

// TaskDirs are the folders that hold accepted task files, in lifecycle
// order. A taskId lives in exactly one of them.
var TaskDirs = []string{DirPending, DirRunning, DirDone, DirFailed, DirCanceled}

// FolderState maps a task folder to the state its files are in.
var FolderState = map[string]State{
	DirPending: StatePending, DirRunning: StateRunning, DirDone: StateSuccess,
	DirFailed: StateFailed, DirCanceled: StateCanceled,
}

// StateFolder maps a state to its folder.
func StateFolder(s State) string {
	for d, st := range FolderState {
		if st == s {
			return d
		}
	}
	return ""
}

// IsTaskFileName reports whether name is a drop that intake takes: *.yaml
// or *.yml, not a dot-file, not *.tmp.
func IsTaskFileName(name string) bool {
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".tmp") {
		return false
	}
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

// TrimTaskExt strips .yaml or .yml.
func TrimTaskExt(name string) string {
	if s, ok := strings.CutSuffix(name, ".yaml"); ok {
		return s
	}
	s, _ := strings.CutSuffix(name, ".yml")
	return s
}

// reasonExt ends the reason file beside a rejected drop.
const reasonExt = ".error"

// ReasonFileName is the reason file beside the rejected drop BASE.yaml (or
// BASE.yml): BASE.error. A file in failed/ with one beside it is a
// rejected drop, kept as it came: not a task.
func ReasonFileName(base string) string { return base + reasonExt }

// RejectedDrops returns the base names of the rejected drops in a listing
// of a failed/ folder: every name with a reason file beside it.
func RejectedDrops(ents []fs.DirEntry) map[string]bool {
	out := map[string]bool{}
	for _, e := range ents {
		if b, ok := strings.CutSuffix(e.Name(), reasonExt); ok {
			out[b] = true
		}
	}
	return out
}
