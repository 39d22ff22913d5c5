// Package spool is the Store: every read, move and rewrite of a task file
// between a spool's folders, and the file-system primitives they rest on.
//
// The folder a task file sits in is the truth about its state; the `state`
// field inside is a convenience for people and scripts, and start-up
// recovery repairs it when a crash left the two out of step.
package spool

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/seal"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Store performs every read, move and rewrite of task files in one spool:
// intake, the lifecycle calls of lease.go, recovery. The folders are the
// state, so any number of processes (daemons on several hosts, the command
// line) may share a spool; a Store remembers only what it has watched for
// a while (see firstSeen), to time its judgments.
type Store struct {
	Layout Layout
	Cfg    *config.Config
	Log    *slog.Logger

	linked       linkSightings // drops seen hard-linked
	unmarked     firstSeen     // running/ files seen not yet marked, by "lane/id"
	unnormalized firstSeen     // pending/ files seen not yet normalized, by "lane/id"
	rejects      rejectWatch   // rejected drops, judged again if they change (rejudge.go)

	guard guard     // folder faults, problems logged once (safeopen, layoutcheck)
	files fsx.Files // durable writes: temps named for cfg.Host, folders guarded from the root down

	// Seal is the installation's key: the coordination state a daemon
	// writes (leases, holds, notify markers) is sealed with it, and a file
	// that fails the check is foreign (see trust.go). The command line
	// sets it once, on the process's one Store; nil: a key of this process
	// alone. A key without bytes (seal.Key{}) means "no key here": records
	// are read unchecked, for display only (status), and nothing can be
	// sealed.
	Seal  *seal.Key
	trust trustState
}

// NewStore returns a Store over cfg.Spool.
func NewStore(cfg *config.Config, log *slog.Logger) *Store {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Store{Layout: NewLayout(cfg.Spool), Cfg: cfg, Log: log}
	s.files = fsx.NewFiles(s.Layout.Root, cfg.Host)
	return s
}

// TaskPathError is a failure about one task file.
type TaskPathError struct {
	Path string
	Err  error
}

func (e *TaskPathError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *TaskPathError) Unwrap() error { return e.Err }

// ReadTaskFile reads and decodes one task file of spoolgate's own folders,
// refusing symlinks and special files (not extra hard links: see fsx.ReadOwn).
func ReadTaskFile(path string) (*taskfile.Task, error) {
	data, _, err := fsx.ReadOwn(path, taskfile.MaxRecordSize)
	if err != nil {
		return nil, &TaskPathError{Path: path, Err: err}
	}
	t, err := taskfile.DecodeRecord(data)
	if err != nil {
		return nil, &TaskPathError{Path: path, Err: err}
	}
	return t, nil
}

// move moves task id of lane k from one folder to another without ever
// replacing a file. Of several processes moving the same task, one wins;
// the others get an error matching os.ErrNotExist.
func (s *Store) move(k taskfile.Kind, from, to, id string) error {
	return s.files.RenameNoReplace(s.Layout.TaskPath(k, from, id), s.Layout.TaskPath(k, to, id))
}

// renameNoSync is fsx.RenameNoReplace without the folder fsyncs.
func (s *Store) renameNoSync(src, dst string) error {
	if err := s.files.GuardedRename(src, dst); err != nil {
		return &os.LinkError{Op: "move", Old: src, New: dst, Err: fsx.UnwrapLink(err)}
	}
	return nil
}

// Submit drops data as <dir>/<id>.yaml the way operators should: written
// under a temp name, then moved into place without replacing anything.
func (s *Store) Submit(dir, id string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, DirPerm); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, id+".yaml")
	if err := s.files.WriteNew(dst, data); err != nil {
		if errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("%s is already waiting in %s: %w", id, dir, os.ErrExist)
		}
		return "", err
	}
	return dst, nil
}

// AppendLog appends one line to <lane>/logs/TASKID.log (see TaskLog).
func (s *Store) AppendLog(k taskfile.Kind, id, line string) error {
	return s.appendTaskLog(k, id, []byte(time.Now().UTC().Format(time.RFC3339Nano)+" "+line+"\n"))
}

// Paused reports whether lane k is paused for this host: by <lane>/paused
// (every host) or <lane>/paused.<host> (this host alone, so that on a shared
// spool the web lane runs on the one machine that holds the login).
func (s *Store) Paused(k taskfile.Kind) bool {
	return s.switchOn(s.Layout.Paused(k)) || s.switchOn(s.Layout.Paused(k)+"."+s.Cfg.Host)
}

// AccountDisabled reports whether account is switched off, by the config
// or by <spool>/accounts/NAME.disabled (read each time: no restart).
func (s *Store) AccountDisabled(account string) bool {
	if account == "" {
		return false
	}
	if a, ok := s.Cfg.Accounts[account]; ok && a.Disabled {
		return true
	}
	return s.switchOn(filepath.Join(s.Layout.Accounts(), account+".disabled"))
}

// WriteFileAtomic is fsx.WriteFileAtomic inside this Store's spool: the temp
// is named for the config's host, and every folder from the spool's root
// down to path's is checked to be a real folder (see guardDir).
func (s *Store) WriteFileAtomic(path string, data []byte) error {
	return s.files.WriteAtomic(path, data)
}

// WriteFileNew is fsx.WriteFileNew inside this Store's spool (see
// Store.WriteFileAtomic).
func (s *Store) WriteFileNew(path string, data []byte) error { return s.files.WriteNew(path, data) }

// RenameNoReplace is fsx.RenameNoReplace inside this Store's spool: both
// folders are guarded.
func (s *Store) RenameNoReplace(src, dst string) error { return s.files.RenameNoReplace(src, dst) }

// KeepSpares makes the Store keep the temps its rewrites leave as spares
// (see spares.go) until DropSpares: the daemon does, for its life.
func (s *Store) KeepSpares() { s.files.Spares.SetOn(true) }

// DropSpares removes every spare and keeps no more (the daemon's
// shutdown, once no rewrite runs).
func (s *Store) DropSpares() { s.files.Spares.SetOn(false) }

// now is the time the Store writes into records: UTC.
func now() time.Time { return time.Now().UTC() }
