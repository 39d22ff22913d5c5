package spool

import (
	"os"
	"path/filepath"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Permissions of everything spoolgate creates.
const (
	DirPerm  = fsx.DirPerm
	FilePerm = fsx.FilePerm
)

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
func (l Layout) Lane(k taskfile.Kind, sub string) string {
	return filepath.Join(l.Root, string(k), sub)
}

// TaskPath returns <root>/<lane>/<dir>/<id>.yaml.
func (l Layout) TaskPath(k taskfile.Kind, dir, id string) string {
	return filepath.Join(l.Root, string(k), dir, id+".yaml")
}

// Incoming is the lane-less drop box <root>/incoming.
func (l Layout) Incoming() string { return filepath.Join(l.Root, taskfile.DirIncoming) }

// Output is <root>/output.
func (l Layout) Output() string { return filepath.Join(l.Root, "output") }

// Accounts is <root>/accounts.
func (l Layout) Accounts() string { return filepath.Join(l.Root, "accounts") }

// Paused is the lane's pause switch file.
func (l Layout) Paused(k taskfile.Kind) string {
	return filepath.Join(l.Root, string(k), taskfile.PausedFile)
}

// LogPath is the task's own log.
func (l Layout) LogPath(k taskfile.Kind, id string) string {
	return filepath.Join(l.Root, string(k), taskfile.DirLogs, id+".log")
}

// CancelPath is the cancel request for id.
func (l Layout) CancelPath(k taskfile.Kind, id string) string {
	return filepath.Join(l.Root, string(k), taskfile.DirCancel, id)
}

// Create makes every folder of the spool (0750), keeping existing ones,
// and refuses a folder that is a symlink or not a folder (fsx.NotRegularError).
func (l Layout) Create() error {
	return l.createChecked()
}

// Locate finds which task folder of lane k holds id, or "" if none.
func (l Layout) Locate(k taskfile.Kind, id string) string {
	return LocateIn(l.Lane(k, ""), taskfile.TaskDirs, id)
}

// LocateIn returns the first of dirs, folders of base (a lane, or a month
// of its archive), that holds id's task file as a regular file, not
// following a link; "" if none does.
func LocateIn(base string, dirs []string, id string) string {
	for _, d := range dirs {
		if fi, err := os.Lstat(filepath.Join(base, d, id+".yaml")); err == nil && fi.Mode().IsRegular() {
			return d
		}
	}
	return ""
}

// LocateAny finds id in either lane.
func (l Layout) LocateAny(id string) (taskfile.Kind, string) {
	for _, k := range taskfile.Kinds {
		if d := l.Locate(k, id); d != "" {
			return k, d
		}
	}
	return "", ""
}

// IsRejectedDrop reports whether lane k's dir/BASE is a rejected drop.
func (l Layout) IsRejectedDrop(k taskfile.Kind, dir, base string) bool {
	_, err := os.Lstat(filepath.Join(l.Lane(k, dir), taskfile.ReasonFileName(base)))
	return err == nil
}
