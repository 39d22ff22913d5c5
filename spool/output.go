package spool

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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

// CheckOutputShape checks a drop's `output:` against the disk and the tasks
// in flight, at intake, before any model is paid for: it must name a file
// (not a folder), every folder on the way under <spool>/output must be a
// real folder (no symlink), what is there already must be a regular file,
// no part may look like spoolgate's own temp files (the upkeep removes
// those), and no pending or running task of this daemon's view of the
// spool may write the same path. CheckOutputPath has checked the text.
// The write checks again, race-free: see WriteOutput.
func (s *Store) CheckOutputShape(t *taskfile.Task, lane taskfile.Kind) *taskfile.RejectError {
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

// CheckOutput is CheckOutputShape and OutputTaken: intake's check.
func (s *Store) CheckOutput(t *taskfile.Task, lane taskfile.Kind) *taskfile.RejectError {
	if rej := s.CheckOutputShape(t, lane); rej != nil {
		return rej
	}
	return s.OutputTaken(t)
}

// WriteOutput writes an answer to <spool>/output/<rel>, durably, and
// race-free against a folder swapped for a symlink: every folder from the
// spool root down is opened with O_NOFOLLOW and every step (the temp file,
// the move, the folder's fsync) is relative to the open folder. Missing
// folders are made; a link or special file anywhere on the way is refused.
// A file already there is never replaced: see WriteOutputFor.
func (s *Store) WriteOutput(rel string, data []byte) error { return s.WriteOutputFor(nil, rel, data) }

// WriteOutputFor is WriteOutput for the task l holds (nil: none). A file
// already at rel is replaced only when the task wrote it, its bytes still
// those the task's record lists (Task.Wrote): the task's own retry or
// rerun rewrites its answer, nobody else's. Before the write, the new
// bytes' SHA-256 is added to the record, durably, so a crash between the
// two never leaves a file its own rerun may not replace. Refused, it is
// an *OutputTakenError naming the file.
func (s *Store) WriteOutputFor(l *Lease, rel string, data []byte) error {
	if err := config.CheckOutputPath(rel); err != nil {
		return err
	}
	key := OutputKey(rel)
	var owns func(string) bool
	if l != nil {
		sum := sha256.Sum256(data)
		if err := l.RecordWrite(taskfile.Written{Path: key, SHA256: hex.EncodeToString(sum[:])}); err != nil {
			return fmt.Errorf("write %s: record it in the task first: %w", key, err)
		}
		owns = func(sum string) bool { return l.Task().Owns(key, sum) }
	}
	err := fsx.WriteBeneathNew(s.Layout.Root, filepath.Join(filepath.Base(s.Layout.Output()), rel), data, s.files.Tag, owns)
	if te := (*fsx.TakenError)(nil); errors.As(err, &te) {
		return &OutputTakenError{Path: key}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}

// ErrOutputTaken matches every OutputTakenError.
var ErrOutputTaken = errors.New("output file exists")

// OutputTakenError is a file under output/ that a task may not write:
// it is there already, and the task did not write it.
type OutputTakenError struct {
	Path string // relative to output/, with /
}

func (e *OutputTakenError) Error() string {
	return fmt.Sprintf("%q already exists in output/ and this task did not write it: spoolgate never replaces another's file (give another output: name, or move the file away)", e.Path)
}

func (e *OutputTakenError) Is(target error) bool {
	return target == ErrOutputTaken || target == os.ErrExist
}

// OutputTaken refuses t's output: when a file is there already that t
// did not write (its bytes are not among those t's record lists): a drop
// is refused at intake, before any model is paid for, rather than fail
// when its answer is written. The write checks again (WriteOutputFor).
func (s *Store) OutputTaken(t *taskfile.Task) *taskfile.RejectError {
	if t.Output == "" {
		return nil
	}
	key := OutputKey(t.Output)
	f, _, err := fsx.OpenOwn(filepath.Join(s.Layout.Output(), filepath.FromSlash(key)), taskfile.MaxRecordSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return taskfile.Rejectf(taskfile.ClassInvalid, "output: %q: %v", taskfile.Clip(t.Output), err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, taskfile.MaxRecordSize)); err != nil {
		return taskfile.Rejectf(taskfile.ClassInvalid, "output: %q: %v", taskfile.Clip(t.Output), err)
	}
	if t.Owns(key, hex.EncodeToString(h.Sum(nil))) {
		return nil
	}
	return taskfile.Rejectf(taskfile.ClassInvalid, "output: %s", (&OutputTakenError{Path: key}).Error())
}

// RecordWrite adds w to the running task's Wrote (once), fenced like
// RecordSend and durable before it returns: the file is written only
// once the record says the task may replace it. A lease that lost the
// task gets an error matching ErrFenced and must not write.
func (l *Lease) RecordWrite(w taskfile.Written) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.marked {
		return errNotMarked
	}
	if l.task.Owns(w.Path, w.SHA256) {
		return nil
	}
	t := l.task.Clone()
	t.Wrote = append(t.Wrote, w)
	data, err := l.s.writeFenced(l.kind, taskfile.DirRunning, t, l.owner, l.task.Attempt, l.wrote)
	if err != nil {
		return err
	}
	if err := fsx.SyncDir(l.s.Layout.Lane(l.kind, taskfile.DirRunning)); err != nil {
		return err
	}
	l.task, l.wrote = t, data
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
