package spool

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Store performs every read and move of task files in one spool. It keeps
// no state of its own: the folders are the state, so any number of
// processes (daemons on several hosts, the command line) may share a spool.
type Store struct {
	L   Layout
	Cfg *Config
	Log *slog.Logger

	linkMu sync.Mutex
	linked map[string]time.Time // drops seen hard-linked, and since when
}

// NewStore returns a Store over cfg.Spool.
func NewStore(cfg *Config, log *slog.Logger) *Store {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Store{L: NewLayout(cfg.Spool), Cfg: cfg, Log: log}
}

// TaskPathError is a failure about one task file.
type TaskPathError struct {
	Path string
	Err  error
}

func (e *TaskPathError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *TaskPathError) Unwrap() error { return e.Err }

// Read reads and decodes the task file id in lane k, folder dir.
func (s *Store) Read(k Kind, dir, id string) (*Task, error) {
	return ReadTaskFile(s.L.TaskPath(k, dir, id))
}

// ReadTaskFile reads and decodes one task file of spoolgate's own folders,
// refusing symlinks and special files (not extra hard links: see ReadOwn).
func ReadTaskFile(path string) (*Task, error) {
	data, _, err := ReadOwn(path, MaxTaskSize)
	if err != nil {
		return nil, &TaskPathError{Path: path, Err: err}
	}
	t, err := DecodeTask(data)
	if err != nil {
		return nil, &TaskPathError{Path: path, Err: err}
	}
	return t, nil
}

// Write rewrites task t in lane k, folder dir, atomically and durably.
func (s *Store) Write(k Kind, dir string, t *Task) error {
	data, err := t.Encode()
	if err != nil {
		return err
	}
	return WriteFileAtomic(s.L.TaskPath(k, dir, t.TaskID), data)
}

// Move moves task id of lane k from one folder to another without ever
// replacing a file. Of several processes moving the same task, one wins;
// the others get an error matching os.ErrNotExist.
func (s *Store) Move(k Kind, from, to, id string) error {
	return RenameNoReplace(s.L.TaskPath(k, from, id), s.L.TaskPath(k, to, id))
}

// MoveNoSync is Move without the folder fsyncs, for a move that a durable
// rewrite in the destination follows at once (which syncs it) and whose
// loss in a crash is a state recovery already handles.
func (s *Store) MoveNoSync(k Kind, from, to, id string) error {
	return renameNoSync(s.L.TaskPath(k, from, id), s.L.TaskPath(k, to, id))
}

// renameNoSync is RenameNoReplace without the folder fsyncs.
func renameNoSync(src, dst string) error {
	if err := renameNoReplace(src, dst); err != nil {
		return &os.LinkError{Op: "move", Old: src, New: dst, Err: unwrapLink(err)}
	}
	return nil
}

// Finish records t's final fields in its current folder, then moves it to
// the folder of t.State. A crash between the two leaves a final state in
// a non-final folder, which recovery completes.
func (s *Store) Finish(k Kind, from string, t *Task) error {
	if err := s.Rewrite(k, from, t); err != nil {
		return err
	}
	to := StateFolder(t.State)
	if to == from {
		return nil
	}
	return s.Move(k, from, to, t.TaskID)
}

// Submit drops data as <dir>/<id>.yaml the way operators should: written
// under a temp name, then moved into place without replacing anything.
func (s *Store) Submit(dir, id string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, DirPerm); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, id+".yaml")
	if err := WriteFileNew(dst, data); err != nil {
		if errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("%s is already waiting in %s: %w", id, dir, os.ErrExist)
		}
		return "", err
	}
	return dst, nil
}

// AppendLog appends one line to <lane>/logs/TASKID.log.
func (s *Store) AppendLog(k Kind, id, line string) error {
	f, err := os.OpenFile(s.L.LogPath(k, id), os.O_WRONLY|os.O_CREATE|os.O_APPEND, FilePerm)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s %s\n", time.Now().UTC().Format(time.RFC3339Nano), line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Paused reports whether lane k is paused for this host: by <lane>/paused
// (every host) or <lane>/paused.<host> (this host alone, so that on a shared
// spool the web lane runs on the one machine that holds the login).
func (s *Store) Paused(k Kind) bool {
	if _, err := os.Lstat(s.L.Paused(k)); err == nil {
		return true
	}
	_, err := os.Lstat(s.L.Paused(k) + "." + s.Cfg.Host)
	return err == nil
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
	_, err := os.Lstat(filepath.Join(s.L.Accounts(), account+".disabled"))
	return err == nil
}
