package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/logonce"
	"github.com/spoolgate/spoolgate/internal/seal"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The spool's trust model (README, "Who may write what"). Users' data
// (drops, cancel and priority requests, pause and account switches) are
// plain files anyone with write access may leave. The daemons' own
// coordination state (account leases, the holds a usage limit writes,
// notify markers and notify/since) is acted on only when a daemon of this
// installation wrote it: each such record is sealed (internal/seal) with
// the installation's key, which lives beside the config, outside the
// spool. A file that fails the check is foreign: it is never acted on and
// never deleted, it is logged once (then counted), and status lists it by
// name.
//
// A task file is both: its submitter's fields (taskId, model, prompt,
// content, ...) are the colleague's to write while it waits in pending/,
// and everything else (the send record, attempts, result, the outcome)
// is what the daemons wrote and act on. So a daemon seals the whole record
// under its file name and lane each time it writes it; a record that
// fails the check when a daemon reads it to act on it (claim, reclaim,
// recovery, a priority change) loses every daemon-written field and runs
// as the fresh task its submitter's fields describe. A send record copied
// from another task, or added to a colleague's waiting task, can thus
// never send the signed-in browser anywhere.

// Seal kinds: what a record is, so that a sealed record of one kind can
// never pass for another.
const (
	SealLease  = "lease"
	SealHold   = "hold"
	SealMarker = "notify-marker"
	SealSince  = "notify-since"
	// SealReleased: accounts/NAME.released, the hold `resume --account`
	// ended (holds.go).
	SealReleased = "hold-released"
)

// sealTaskKind is the seal kind of lane k's task records: a record of one
// lane never passes for the other's.
func sealTaskKind(k taskfile.Kind) string { return "task-" + string(k) }

// ErrForeign matches every error of a record that failed its seal check.
var ErrForeign = errors.New("foreign file: not written by a daemon of this installation")

// ForeignError says why a record is foreign.
type ForeignError struct {
	Path string
	Err  error // seal.ErrUnsealed, seal.ErrBadSeal, seal.ErrNoKey, or why it could not be read
}

func (e *ForeignError) Error() string   { return e.Path + ": " + e.Err.Error() }
func (e *ForeignError) Unwrap() []error { return []error{ErrForeign, e.Err} }

// Foreign is a foreign file, for status.
type Foreign struct {
	File   string `json:"file"`   // relative to the spool root, with /
	Kind   string `json:"kind"`   // lease, hold, notify-marker, notify-since
	Reason string `json:"reason"` // why it is not trusted
}

// trustState is what a Store remembers of foreign files: which it has
// logged, and when it first saw a lease renewal set in the future.
type trustState struct {
	once sync.Once
	lim  *logonce.Limiter

	mu     sync.Mutex
	future map[string]futureSighting // by path
	// holdSeen is the hold this store last read of each account, and
	// released the holds it saw end (their file gone or a tombstone):
	// a copy of one put back is a replay, even with its tombstone gone.
	holdSeen map[string]taskfile.Hold
	released map[string]bool // "account\x00" + holdKey
}

type futureSighting struct {
	renewed time.Time // the time the file claims
	first   time.Time // when this store first saw it claim it
}

// processKey seals for a Store without a key: trusted by nobody else.
var processKey = seal.New()

func (s *Store) key() *seal.Key {
	if s.Seal != nil {
		return s.Seal
	}
	return processKey
}

// Limiter is the Store's "log once, then count" for rescan-time problems
// of single files (foreign records, unreadable files): one line per file
// and cause, then a count every few minutes.
func (s *Store) Limiter() *logonce.Limiter {
	s.trust.once.Do(func() { s.trust.lim = logonce.New(s.Log, 0) })
	return s.trust.lim
}

// rel names path relative to the spool root, for logs and status.
func (s *Store) rel(path string) string {
	if r, err := filepath.Rel(s.Layout.Root, path); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return path
}

// SealFor returns body sealed as a record of kind for the file path.
func (s *Store) SealFor(kind, path string, body []byte) ([]byte, error) {
	return s.key().Seal(kind, filepath.Base(path), body)
}

// OpenSealed checks data, read from path, as a sealed record of kind and
// returns its body; a record that fails is a *ForeignError, logged once.
func (s *Store) OpenSealed(kind, path string, data []byte) ([]byte, error) {
	body, err := s.key().Open(kind, filepath.Base(path), data)
	if errors.Is(err, seal.ErrNoKey) {
		// No key to check with (status on a machine without it): shown
		// as it says, acted on by nobody (a daemon always has a key).
		if b, ok := seal.Body(data); ok {
			return b, nil
		}
		err = seal.ErrUnsealed
	}
	if err != nil {
		return nil, s.foreign(kind, path, err)
	}
	s.Limiter().Forget("foreign:" + path)
	return body, nil
}

// ReadSealed reads the sealed record of kind at path (a regular file,
// never followed, at most max bytes). A file that does not exist is
// fs.ErrNotExist; anything else that fails is a *ForeignError.
func (s *Store) ReadSealed(kind, path string, max int64) ([]byte, os.FileInfo, error) {
	data, fi, err := fsx.ReadOwn(path, max)
	if errors.Is(err, fs.ErrNotExist) {
		s.Limiter().Forget("foreign:" + path)
		return nil, nil, err
	}
	if err != nil {
		return nil, fi, s.foreign(kind, path, err)
	}
	body, err := s.OpenSealed(kind, path, data)
	return body, fi, err
}

// foreign logs path once as foreign (then counts) and returns the error.
func (s *Store) foreign(kind, path string, err error) error {
	s.Limiter().Fail("foreign:"+path, "foreign file ignored: not written by a daemon of this installation (never acted on, never deleted)", err,
		"file", s.rel(path), "kind", kind)
	return &ForeignError{Path: path, Err: err}
}

// WriteSealedAtomic replaces path with body sealed as kind, durably.
func (s *Store) WriteSealedAtomic(kind, path string, body []byte) error {
	data, err := s.SealFor(kind, path, body)
	if err != nil {
		return err
	}
	return s.files.WriteAtomic(path, data)
}

// WriteSealedNew creates path with body sealed as kind, durably, failing
// with an error matching fs.ErrExist when it exists.
func (s *Store) WriteSealedNew(kind, path string, body []byte) error {
	data, err := s.SealFor(kind, path, body)
	if err != nil {
		return err
	}
	return s.files.WriteNew(path, data)
}

// EncodeTask is t's encoding as lane k's task file, sealed for its name
// (TASKID.yaml). Without a key (a command run where the installation's
// key is not) the record is written unsealed: a daemon that reads it
// later runs it as a fresh task.
func (s *Store) EncodeTask(k taskfile.Kind, t *taskfile.Task) ([]byte, error) {
	data, err := t.Encode()
	if err != nil {
		return nil, err
	}
	sealed, err := s.key().Seal(sealTaskKind(k), t.TaskID+".yaml", data)
	if errors.Is(err, seal.ErrNoKey) {
		return data, nil
	}
	return sealed, err
}

// Read reads and decodes the task file id in lane k, folder dir, for a
// daemon to act on: a record whose seal fails (planted, edited, copied
// from another task) is logged once and comes back with every field a
// daemon writes cleared (taskfile.Task.DropDaemonFields), as a fresh
// task; readChecked also returns its *ForeignError.
func (s *Store) Read(k taskfile.Kind, dir, id string) (*taskfile.Task, error) {
	t, _, err := s.readChecked(k, dir, id)
	return t, err
}

func (s *Store) readChecked(k taskfile.Kind, dir, id string) (t *taskfile.Task, foreign error, err error) {
	path := s.Layout.TaskPath(k, dir, id)
	data, _, err := fsx.ReadOwn(path, taskfile.MaxRecordSize)
	if err != nil {
		return nil, nil, &TaskPathError{Path: path, Err: err}
	}
	t, err = taskfile.DecodeRecord(data)
	if err != nil {
		return nil, nil, &TaskPathError{Path: path, Err: err}
	}
	if _, err := s.key().Open(sealTaskKind(k), filepath.Base(path), data); err != nil && !(errors.Is(err, seal.ErrNoKey) && seal.Sealed(data)) {
		// A drop not yet normalized has no daemon-written fields to
		// drop, and is no news: only a record that had some is logged.
		if !t.DropDaemonFields() {
			return t, nil, nil
		}
		// Once in the daemon's log and the task's own (a reclaim reads a
		// running file at every pass), then counted.
		if s.Limiter().Fail("foreign:"+path, "foreign task record: its daemon-written fields (send, attempts, result, outcome) are dropped, the task runs as a fresh one", err,
			"file", s.rel(path), "kind", sealTaskKind(k)) {
			_ = s.AppendLog(k, id, "foreign record: the task file's daemon-written fields (send, attempts, result, outcome) were not written by a daemon of this installation ("+err.Error()+"); dropped, the task runs as a fresh one")
		}
		return t, &ForeignError{Path: path, Err: err}, nil
	}
	s.Limiter().Forget("foreign:" + path)
	return t, nil, nil
}

// clampFuture is when a file that claims to be renewed at renewed counts
// as renewed: never later than the first time this store saw that claim,
// so a renewal set in the future (a clock far off, or a planted file)
// binds for staleAfter from then at most, never for ever. It reports
// whether the claim was in the future (logged once).
func (s *Store) clampFuture(kind, path string, renewed, now time.Time) (time.Time, bool) {
	if !renewed.After(now) {
		s.trust.mu.Lock()
		delete(s.trust.future, path)
		s.trust.mu.Unlock()
		return renewed, false
	}
	s.trust.mu.Lock()
	if s.trust.future == nil {
		s.trust.future = map[string]futureSighting{}
	}
	f, ok := s.trust.future[path]
	if !ok || !f.renewed.Equal(renewed) {
		f = futureSighting{renewed: renewed, first: now}
		s.trust.future[path] = f
	}
	s.trust.mu.Unlock()
	if !ok {
		s.Limiter().Fail("future:"+path, "renewal time in the future (a clock far off, or a planted file): it counts as renewed when first seen", fmt.Errorf("renewed %s", renewed.UTC().Format(time.RFC3339)),
			"file", s.rel(path), "kind", kind, "ahead", renewed.Sub(now).Round(time.Second).String())
	}
	return f.first, true
}

// CheckForeign lists the foreign files among the daemons' coordination
// state in the spool: account leases and holds in accounts/, notify/since
// and the notify markers that a daemon would act on (those without .sent).
// Holds of accounts the config does not know are foreign too: no daemon
// of this installation writes them.
func (s *Store) CheckForeign() []Foreign {
	var out []Foreign
	add := func(kind, path string, err error) {
		var fe *ForeignError
		if errors.As(err, &fe) {
			err = fe.Err
		}
		out = append(out, Foreign{File: s.rel(path), Kind: kind, Reason: taskfile.OneLine(err.Error())})
	}
	known := KnownAccounts(s.Cfg)
	acc := s.Layout.Accounts()
	names, _ := fsx.ReadDirNames(acc)
	for _, n := range names {
		p := filepath.Join(acc, n)
		switch {
		case strings.Contains(n, LeaseExt) && !fsx.IsOwnTemp(n):
			account, _, _ := strings.Cut(n, LeaseExt)
			if _, err := s.readLeaseFile(account, n); err != nil {
				add(SealLease, p, err)
			}
		case strings.HasSuffix(n, taskfile.HeldExt):
			account := strings.TrimSuffix(n, taskfile.HeldExt)
			if !known[account] {
				add(SealHold, p, errors.New("no such account in the config"))
				continue
			}
			if _, err := s.readHold(account); err != nil && !errors.Is(err, fs.ErrNotExist) {
				add(SealHold, p, err) // a replayed hold too
			}
		}
	}
	nd := s.notifyDir()
	if _, _, err := s.ReadSealed(SealSince, filepath.Join(nd, "since"), 1024); err != nil && !errors.Is(err, fs.ErrNotExist) {
		add(SealSince, filepath.Join(nd, "since"), err)
	}
	bd := filepath.Join(nd, "batches")
	bnames, _ := fsx.ReadDirNames(bd)
	sent := map[string]bool{}
	for _, n := range bnames {
		if k, ok := strings.CutSuffix(n, ".sent"); ok {
			sent[k] = true
		}
	}
	for _, n := range bnames {
		key, isJSON := strings.CutSuffix(n, ".json")
		k2, _, isTake := strings.Cut(n, ".take.")
		switch {
		case fsx.IsOwnTemp(n):
		case isJSON && !sent[key], isTake && !sent[k2]:
			if _, _, err := s.ReadSealed(SealMarker, filepath.Join(bd, n), 1<<20); err != nil && !errors.Is(err, fs.ErrNotExist) {
				add(SealMarker, filepath.Join(bd, n), err)
			}
		}
	}
	// What could have been acted on first (leases, notify), then holds
	// (a flood of planted hold files must not hide a forged lease behind
	// status's cut at 10), each by name.
	rank := map[string]int{SealLease: 0, SealSince: 1, SealMarker: 2, SealHold: 3}
	sort.Slice(out, func(i, j int) bool {
		if ri, rj := rank[out[i].Kind], rank[out[j].Kind]; ri != rj {
			return ri < rj
		}
		return out[i].File < out[j].File
	})
	return out
}

// KnownAccounts are the accounts the config names: under accounts:, in a
// web model's account or accounts, and the web sessions'. Only these can
// be held by a daemon of this installation.
func KnownAccounts(cfg *config.Config) map[string]bool {
	known := map[string]bool{}
	for n := range cfg.Accounts {
		known[n] = true
	}
	for _, m := range cfg.Models {
		for _, a := range m.Pinned() {
			known[a] = true
		}
	}
	for _, sp := range cfg.WebSessions() {
		known[sp.Account] = true
	}
	return known
}
