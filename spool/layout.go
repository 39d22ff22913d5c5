package spool

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Permissions of everything spoolgate creates.
const (
	DirPerm  os.FileMode = 0o750
	FilePerm os.FileMode = 0o640
)

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

// Layout names every path of a spool. It does no I/O but Create.
type Layout struct {
	Root string
}

// NewLayout returns the layout rooted at root, made absolute.
func NewLayout(root string) Layout {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return Layout{Root: root}
}

// Lane returns <root>/<lane>/<sub>.
func (l Layout) Lane(k Kind, sub string) string { return filepath.Join(l.Root, string(k), sub) }

// TaskPath returns <root>/<lane>/<dir>/<id>.yaml.
func (l Layout) TaskPath(k Kind, dir, id string) string {
	return filepath.Join(l.Root, string(k), dir, id+".yaml")
}

// Incoming is the lane-less drop box <root>/incoming.
func (l Layout) Incoming() string { return filepath.Join(l.Root, DirIncoming) }

// Output is <root>/output.
func (l Layout) Output() string { return filepath.Join(l.Root, "output") }

// Accounts is <root>/accounts.
func (l Layout) Accounts() string { return filepath.Join(l.Root, "accounts") }

// Paused is the lane's pause switch file.
func (l Layout) Paused(k Kind) string { return filepath.Join(l.Root, string(k), PausedFile) }

// LogPath is the task's own log.
func (l Layout) LogPath(k Kind, id string) string {
	return filepath.Join(l.Root, string(k), DirLogs, id+".log")
}

// CancelPath is the cancel request for id.
func (l Layout) CancelPath(k Kind, id string) string {
	return filepath.Join(l.Root, string(k), DirCancel, id)
}

// Create makes every folder of the spool (0750), keeping existing ones,
// and refuses a folder that is a symlink or not a folder (NotRegularError).
func (l Layout) Create() error {
	return l.createChecked()
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

// Locate finds which task folder of lane k holds id, or "" if none.
func (l Layout) Locate(k Kind, id string) string {
	for _, d := range TaskDirs {
		if fi, err := os.Lstat(l.TaskPath(k, d, id)); err == nil && fi.Mode().IsRegular() {
			return d
		}
	}
	return ""
}

// LocateAny finds id in either lane.
func (l Layout) LocateAny(id string) (Kind, string) {
	for _, k := range Kinds {
		if d := l.Locate(k, id); d != "" {
			return k, d
		}
	}
	return "", ""
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

// IsRejectedDrop reports whether lane k's dir/BASE is a rejected drop.
func (l Layout) IsRejectedDrop(k Kind, dir, base string) bool {
	_, err := os.Lstat(filepath.Join(l.Lane(k, dir), ReasonFileName(base)))
	return err == nil
}
