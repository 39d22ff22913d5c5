package spool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// WriteLogFile writes a file beside the task logs, <lane>/logs/<name>
// (a failed web attempt's screenshot and page), durably and race-free
// like WriteOutput: no folder on the way is followed through a symlink.
// name must be a plain file name.
func (s *Store) WriteLogFile(k taskfile.Kind, name string, data []byte) error {
	if err := plainName(name); err != nil {
		return err
	}
	return fsx.WriteBeneath(s.Layout.Root, filepath.Join(string(k), taskfile.DirLogs, name), data, s.files.Tag)
}

// RemoveLogFile deletes <lane>/logs/<name>; name must be a plain file
// name. The lane's folders are the daemon's own (checked at start), and a
// final symlink is removed, never followed.
func (s *Store) RemoveLogFile(k taskfile.Kind, name string) error {
	if err := plainName(name); err != nil {
		return err
	}
	return os.Remove(filepath.Join(s.Layout.Lane(k, taskfile.DirLogs), name))
}

// LogFiles are the lane's log folder as an attempt.LogFiles.
func (s *Store) LogFiles(k taskfile.Kind) LogFiles { return LogFiles{s, k} }

// LogFiles is a lane's log folder (see Store.LogFiles).
type LogFiles struct {
	s *Store
	k taskfile.Kind
}

// Save writes name and returns its path relative to the spool.
func (l LogFiles) Save(name string, data []byte) (string, error) {
	if err := l.s.WriteLogFile(l.k, name, data); err != nil {
		return "", err
	}
	return filepath.ToSlash(filepath.Join(string(l.k), taskfile.DirLogs, name)), nil
}

// Remove deletes name.
func (l LogFiles) Remove(name string) error { return l.s.RemoveLogFile(l.k, name) }

func plainName(name string) error {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return fmt.Errorf("log file %q is not a plain file name", name)
	}
	return nil
}

// ArtifactSaver is where task id's generated files go (an
// attempt.ArtifactSaver): <lane>/outputs/<id>/NN.ext, linked from the
// task file as ../outputs/<id>/NN.ext; or, when the task has output:,
// beside that file as STEM-NN.ext (output.go's checks and race-free
// write). Both are durable (fsx: temp, fsync, rename, fsync folder).
func (s *Store) ArtifactSaver(k taskfile.Kind, id, output string) ArtifactFiles {
	return ArtifactFiles{s: s, k: k, id: id, output: output}
}

// ArtifactFiles is one task's folder of generated files.
type ArtifactFiles struct {
	s          *Store
	k          taskfile.Kind
	id, output string
	lease      *Lease // the task's, whose record says which files beside output: it wrote (For)
}

// For is a with the files beside the output written for the task l
// holds: its own earlier files there may be replaced, nobody else's
// (Store.WriteOutputFor).
func (a ArtifactFiles) For(l *Lease) ArtifactFiles {
	a.lease = l
	return a
}

// Stem is the output's name without its extension, or "".
func (a ArtifactFiles) Stem() string {
	if a.output == "" {
		return ""
	}
	b := filepath.Base(filepath.FromSlash(a.output))
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// Save writes name and returns its path relative to the result.
func (a ArtifactFiles) Save(name string, data []byte) (string, error) {
	if err := plainName(name); err != nil {
		return "", err
	}
	if a.output != "" {
		rel := filepath.Join(filepath.Dir(filepath.FromSlash(a.output)), name)
		if err := a.s.WriteOutputFor(a.lease, rel, data); err != nil {
			return "", err
		}
		return name, nil
	}
	if err := plainName(a.id); err != nil {
		return "", err
	}
	if err := fsx.WriteBeneath(a.s.Layout.Root, filepath.Join(string(a.k), taskfile.DirOutputs, a.id, name), data, a.s.files.Tag); err != nil {
		return "", err
	}
	return "../" + taskfile.DirOutputs + "/" + a.id + "/" + name, nil
}

// ArtifactBase is the folder t's artifacts' paths are relative to: the
// folder of its output: file, or taskDir, the folder its task file is in
// (a lane's done/, or an archive month's).
func (l Layout) ArtifactBase(taskDir string, t *taskfile.Task) string {
	if t.Output != "" {
		return filepath.Join(l.Output(), filepath.Dir(filepath.FromSlash(t.Output)))
	}
	return taskDir
}
