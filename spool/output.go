package spool

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/attach"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// OutputKey is the form of an output path that two tasks are compared by:
// slashes, cleaned.
func OutputKey(rel string) string {
	if rel == "" {
		return ""
	}
	return path.Clean(filepath.ToSlash(rel))
}

// SetOutputOwner tells intake who will write an output path: owner(key)
// names the pending or running task ("lane/taskId") whose output is key,
// if any. The daemon sets it from its lanes (their pending indexes and
// running attempts), so the check costs a map lookup, not a scan of the
// spool. Without it (the command line), intake checks the disk only.
func (s *Store) SetOutputOwner(owner func(key string) (string, bool)) {
	s.guard.mu.Lock()
	defer s.guard.mu.Unlock()
	s.guard.outputOwner = owner
}

// CheckOutput checks a drop's `output:` against the disk and the tasks
// in flight, at intake, before any model is paid for: it must name a file
// (not a folder), every folder on the way under <spool>/output must be a
// real folder (no symlink), what is there already must be a regular file,
// no part may look like spoolgate's own temp files (the upkeep removes
// those), and no pending or running task of this daemon's view of the
// spool may write the same path. CheckOutputPath has checked the text.
// The write checks again, race-free: see WriteOutput.
func (s *Store) CheckOutput(t *taskfile.Task, lane taskfile.Kind) *taskfile.RejectError {
	if t.Output == "" {
		return nil
	}
	o := taskfile.Clip(t.Output)
	if strings.HasSuffix(filepath.ToSlash(t.Output), "/") {
		return taskfile.Rejectf(taskfile.ClassInvalid, "output: %q names a folder: give a file name", o)
	}
	parts, err := fsx.SplitRel(t.Output)
	if err != nil {
		return taskfile.Rejectf(taskfile.ClassInvalid, "output: %v", err)
	}
	for _, p := range parts {
		if fsx.IsOwnTemp(p) {
			return taskfile.Rejectf(taskfile.ClassInvalid, "output: %q uses spoolgate's own temp-file names (.sg-*.tmp)", o)
		}
		if len(p) > 255 {
			return taskfile.Rejectf(taskfile.ClassInvalid, "output: %q has a name over 255 bytes", o)
		}
	}
	if err := fsx.CheckFolder(s.Layout.Output()); err != nil {
		return taskfile.Rejectf(taskfile.ClassInvalid, "output: the spool's output folder is unusable: %v", err)
	}
	kind, at, err := fsx.LstatBeneath(s.Layout.Output(), parts)
	switch {
	case err != nil:
		return taskfile.Rejectf(taskfile.ClassInvalid, "output: %q: %v", o, err)
	case kind == "symlink":
		return taskfile.Rejectf(taskfile.ClassInvalid, "output: %q goes through %s, which is a symlink: spoolgate never writes through links", o, at)
	case kind != "" && at == filepath.Join(append([]string{s.Layout.Output()}, parts...)...):
		return taskfile.Rejectf(taskfile.ClassInvalid, "output: %q is a %s, not a file spoolgate may write", o, kind)
	case kind != "":
		return taskfile.Rejectf(taskfile.ClassInvalid, "output: %q goes through %s, which is a %s, not a folder", o, at, kind)
	}
	s.guard.mu.Lock()
	owner := s.guard.outputOwner
	s.guard.mu.Unlock()
	if owner != nil {
		if who, ok := owner(OutputKey(t.Output)); ok && who != string(lane)+"/"+t.TaskID {
			return taskfile.Rejectf(taskfile.ClassInvalid, "output: %q is already the output of task %s, pending or running: two tasks would overwrite each other's answer", o, who)
		}
	}
	return nil
}

// WriteOutput writes an answer to <spool>/output/<rel>, durably, and
// race-free against a folder swapped for a symlink: every folder from the
// spool root down is opened with O_NOFOLLOW and every step (the temp file,
// the rename, the folder's fsync) is relative to the open folder. Missing
// folders are made; a link or special file anywhere on the way is refused.
func (s *Store) WriteOutput(rel string, data []byte) error {
	if err := config.CheckOutputPath(rel); err != nil {
		return err
	}
	if err := fsx.WriteBeneath(s.Layout.Root, filepath.Join(filepath.Base(s.Layout.Output()), rel), data, s.files.Tag); err != nil {
		return fmt.Errorf("write %s: %w", filepath.ToSlash(rel), err)
	}
	return nil
}

// CheckAttachments checks a drop's `attachments:` (spool/attach.Check)
// and records what it found in t.AttachmentsChecked. taskDir is the
// folder intake reads the drop from (its lane's incoming/ or the drop
// box), "" for a task that has none (the HTTP door): relative paths are
// looked up there, then in the spool's files/. Intake, submit, the console
// and the door all call it, so a drop is refused for one reason on every
// path.
func (s *Store) CheckAttachments(t *taskfile.Task, taskDir string) *taskfile.RejectError {
	checked, rej := attach.Check(s.Cfg, t, attach.Dirs{Task: taskDir, Files: attach.FilesFolder(s.Layout.Root)})
	if rej != nil {
		return rej
	}
	t.AttachmentsChecked = checked
	return nil
}
