package spool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/seal"
)

// The audit trail: every action taken from the console appends one line
// to <spool>/audit/YYYY-MM.log (UTC month): a JSON object (time, user,
// remote address, action, tasks, detail), a tab, and its seal
// (internal/seal's trailer, kind "audit", the file's name), so a line a
// colleague writes into the file, or copies from another month's, is told
// from one a daemon of this installation wrote: it is shown as foreign,
// never as who did what.

// SealAudit is the seal kind of an audit line.
const SealAudit = "audit"

// AuditDir is the audit folder under the spool root.
const AuditDir = "audit"

// maxAuditRead is how much of the end of each month's file a page reads.
const maxAuditRead = 4 << 20

// auditMonths is how many months back a page looks for a task's actions.
const auditMonths = 3

// AuditEntry is one action.
type AuditEntry struct {
	Time   time.Time `json:"time"`
	User   string    `json:"user"`
	Remote string    `json:"remote"`
	Action string    `json:"action"`           // cancel, retry, priority, pause, resume, release, submit, import, login, logout
	Tasks  []string  `json:"tasks,omitempty"`  // LANE/ID
	Batch  string    `json:"batch,omitempty"`  // the batch acted on, if any
	Detail string    `json:"detail,omitempty"` // the lane, the level, the account, the outcome

	// Foreign is why the line is not trusted ("" for a line a daemon of
	// this installation sealed); not written.
	Foreign string `json:"-"`
}

var auditMu sync.Mutex // one append at a time in this process

func auditSep() string { return "\t" + seal.Trailer }

// AppendAudit appends e, sealed, to this month's audit file, durably.
func (s *Store) AppendAudit(e AuditEntry) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	js, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	dir := filepath.Join(s.Layout.Root, AuditDir)
	name := e.Time.Format("2006-01") + ".log"
	body := append(js, '\n')
	sealed, err := s.key().Seal(SealAudit, name, body)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	line := make([]byte, 0, len(sealed)+1)
	line = append(line, js...)
	line = append(line, '\t')
	line = append(line, sealed[len(body):]...)
	auditMu.Lock()
	defer auditMu.Unlock()
	if err := os.MkdirAll(dir, DirPerm); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	f, err := fsx.OpenAppend(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if _, err := f.Write(line); err != nil {
		_ = f.Close()
		return fmt.Errorf("audit: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("audit: %w", err)
	}
	return f.Close()
}

// OpenAuditLine reads one line of the audit file name: its entry, with
// Foreign set when its seal is missing or wrong. ok is false for a line
// that is not an entry at all (nothing to show but that it is foreign).
func (s *Store) OpenAuditLine(name string, line []byte) (e AuditEntry, ok bool) {
	js, mac, sealed := bytes.Cut(line, []byte(auditSep()))
	if err := json.Unmarshal(js, &e); err != nil {
		return AuditEntry{Foreign: "not an audit entry"}, false
	}
	if !sealed {
		e.Foreign = seal.ErrUnsealed.Error()
		return e, true
	}
	data := make([]byte, 0, len(line)+2)
	data = append(data, js...)
	data = append(data, '\n')
	data = append(data, seal.Trailer...)
	data = append(data, mac...)
	data = append(data, '\n')
	if _, err := s.key().Open(SealAudit, name, data); err != nil {
		e.Foreign = err.Error()
	}
	return e, true
}

// Audit reads the audit lines of the last months (newest month last,
// each file's order kept) that match keep; foreign lines that parse are
// returned too, marked.
func (s *Store) Audit(now time.Time, keep func(AuditEntry) bool) ([]AuditEntry, error) {
	dir := filepath.Join(s.Layout.Root, AuditDir)
	var out []AuditEntry
	for i := auditMonths - 1; i >= 0; i-- {
		name := now.UTC().AddDate(0, -i, 0).Format("2006-01") + ".log"
		data, _, err := ReadTail(filepath.Join(dir, name), maxAuditRead)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("audit %s: %w", name, err)
		}
		for line := range bytes.Lines(data) {
			line = bytes.TrimRight(line, "\r\n")
			if len(line) == 0 {
				continue
			}
			if e, ok := s.OpenAuditLine(name, line); ok && keep(e) {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// AuditOf is the audit of one task (LANE/ID) or, with task "", of one batch.
func (s *Store) AuditOf(now time.Time, task, batch string) ([]AuditEntry, error) {
	return s.Audit(now, func(e AuditEntry) bool {
		if task != "" {
			return slices.Contains(e.Tasks, task)
		}
		return batch != "" && e.Batch == batch
	})
}
