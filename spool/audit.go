package spool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/seal"
)

// The audit trail: every action taken through a door (a console user, a
// front-door token, the live view, the command line) appends one line to
// <spool>/audit/YYYY-MM.log (UTC month): a JSON object (time, user,
// remote address, door, action, tasks, detail, seq, prev), a tab, and its
// seal (internal/seal's trailer, kind "audit", the file's name), so a line
// a colleague writes into the file, or copies from another month's, is
// told from one a daemon of this installation wrote: it is shown as
// foreign, never as who did what.
//
// The lines of one file form a chain: each carries its number in the file
// (seq) and the seal of the sealed line before it (prev), and its own seal
// covers both. A sealed line deleted, duplicated or moved therefore shows
// as a break at its place (the next line does not follow the one above
// it), on the pages and in `spoolgate audit verify`; a line only edited
// fails its own seal and breaks the chain after it. Lines sealed before
// the chain (no seq) are read as such, never as breaks. Removing the last
// lines of a file, or the whole file, leaves no break: the chain proves
// order and completeness between the lines that are there.

// SealAudit is the seal kind of an audit line.
const SealAudit = "audit"

// AuditDir is the audit folder under the spool root.
const AuditDir = "audit"

// auditLockName is the lock file beside the month files (see AppendAudit).
const auditLockName = "audit.lock"

// The bounds of what a page reads of each month's file, from its end:
// at most maxAuditLines sealed lines, maxAuditRead bytes of them, and
// maxAuditScan bytes in all. Lines that are not this installation's
// (junk, planted, forged) are skipped without counting towards the first
// two, so up to maxAuditScan bytes of them never hide the sealed lines
// before them; at most maxAuditForeign of them are kept to be shown.
const (
	maxAuditLines   = 5000
	maxAuditRead    = 4 << 20
	maxAuditScan    = 64 << 20
	maxAuditForeign = 20
	// maxAuditLine: a longer line is junk (a sealed line is a few
	// hundred bytes), skipped without being held.
	maxAuditLine = 64 << 10
	// auditLockWait: how long an append waits for another writer's lock.
	auditLockWait = 10 * time.Second
)

// auditMonths is how many months back a page looks for a task's actions.
const auditMonths = 3

// Doors, the AuditEntry.Door of each way in.
const (
	DoorConsole = "console" // a console user's button or form
	DoorToken   = "door"    // a front-door token (User is the token's name)
	DoorLive    = "live"    // the live view
	DoorCLI     = "cli"     // the command line (User is user@host)
)

// AuditEntry is one action.
type AuditEntry struct {
	Time   time.Time `json:"time"`
	User   string    `json:"user"`
	Remote string    `json:"remote"`
	Door   string    `json:"door,omitempty"`   // console, door, live, cli ("" in lines from before doors were named)
	Action string    `json:"action"`           // cancel, retry, priority, pause, resume, release, submit, import, login, logout
	Tasks  []string  `json:"tasks,omitempty"`  // LANE/ID
	Batch  string    `json:"batch,omitempty"`  // the batch acted on, if any
	Detail string    `json:"detail,omitempty"` // the lane, the level, the account, the outcome

	// Seq is the line's number in its file's chain (1 for the first), 0
	// for a line sealed before the chain; Prev is the seal of the sealed
	// line before it ("" for none). Both are set by AppendAudit.
	Seq  int64  `json:"seq,omitempty"`
	Prev string `json:"prev,omitempty"`

	// Foreign is why the line is not trusted ("" for a line a daemon of
	// this installation sealed); not written.
	Foreign string `json:"-"`
	// Break, on an entry of its own (no action), is why the chain breaks
	// at this place: the sealed line after it does not follow the one
	// before. Audit returns breaks whatever keep says.
	Break string `json:"-"`
	// File and Line say where a break is (Line 0 when the page read only
	// the file's end and does not know the number).
	File string `json:"-"`
	Line int    `json:"-"`
	// Unchained: a sealed line from before the chain (an older spoolgate).
	Unchained bool `json:"-"`
}

var auditMu sync.Mutex // one append at a time in this process

func auditSep() string { return "\t" + seal.Trailer }

// AppendAudit appends e, sealed and chained, to this month's audit file,
// durably.
//
// Several daemons, on several hosts, and the command line append to one
// file on a shared folder, and each line must name the seal of the line
// before it. So reading the last sealed line and appending the next
// happen under one exclusive lock, <spool>/audit/audit.lock (gofrs/flock:
// flock on Unix, which Linux NFS clients turn into NLM locks and SMB
// honours; LockFileEx on Windows), plus a mutex for this process's
// goroutines. One chain per file, not one per writer: a writer's own
// chain would end with each command-line call, so a command-line line
// deleted would leave no trace, and the order between writers would be
// unproven. The lock also keeps two hosts' appends from interleaving
// where O_APPEND is not atomic (NFS). If the lock cannot be taken (a
// share without locks, a holder hung for auditLockWait), the line is
// still written, chained to the last line read, and the fault logged:
// losing an action is worse than a possible fork, which verify shows.
func (s *Store) AppendAudit(e AuditEntry) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	dir := filepath.Join(s.Layout.Root, AuditDir)
	name := e.Time.Format("2006-01") + ".log"
	path := filepath.Join(dir, name)
	auditMu.Lock()
	defer auditMu.Unlock()
	if err := os.MkdirAll(dir, DirPerm); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	unlock := s.lockAudit(dir)
	defer unlock()
	f, err := fsx.OpenAppend(path)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer f.Close()
	rf, err := fsx.OpenNoFollow(path) // the append handle cannot read
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	last, lastByte, err := s.lastAuditLine(rf, name)
	_ = rf.Close()
	if err != nil {
		return fmt.Errorf("audit %s: %w", name, err)
	}
	e.Seq, e.Prev = 1, ""
	if last.mac != "" {
		e.Seq, e.Prev = last.e.Seq+1, last.mac
	}
	e.Foreign, e.Break, e.File, e.Line, e.Unchained = "", "", "", 0, false
	js, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	body := append(js, '\n')
	sealed, err := s.key().Seal(SealAudit, name, body)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	line := make([]byte, 0, len(sealed)+2)
	if lastByte != 0 && lastByte != '\n' {
		// The file ends inside a line (junk, a torn write): start ours on
		// a line of its own, or it would read as part of that one.
		line = append(line, '\n')
	}
	line = append(line, js...)
	line = append(line, '\t')
	line = append(line, sealed[len(body):]...)
	if _, err := f.Write(line); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return f.Close()
}

// lockAudit takes the audit folder's lock (see AppendAudit); the returned
// func releases it. A lock not taken is logged, not fatal.
func (s *Store) lockAudit(dir string) func() {
	fl := flock.New(filepath.Join(dir, auditLockName), flock.SetFlag(os.O_CREATE|os.O_RDONLY|fsx.NoFollowFlags), flock.SetPermissions(fsx.FilePerm))
	ctx, cancel := context.WithTimeout(context.Background(), auditLockWait)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if !ok || err != nil {
		if err == nil {
			err = fmt.Errorf("held by another writer for %s", auditLockWait)
		}
		s.Log.Warn("audit: the lock is not taken; the line is written anyway (verify shows a fork if another host wrote at this moment)",
			"lock", fl.Path(), "err", err)
		_ = fl.Close()
		return func() {}
	}
	return func() { _ = fl.Unlock() }
}

// auditLine is one sealed line read back: its entry and its seal.
type auditLine struct {
	e   AuditEntry
	mac string
}

// lastAuditLine finds the last line of f (the file name) that a daemon of
// this installation sealed, reading back from the end over anything else,
// at most maxAuditScan bytes; and the file's last byte (0 when empty).
func (s *Store) lastAuditLine(f *os.File, name string) (last auditLine, lastByte byte, err error) {
	fi, err := f.Stat()
	if err != nil {
		return last, 0, err
	}
	if fi.Size() > 0 {
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, fi.Size()-1); err != nil {
			return last, 0, err
		}
		lastByte = b[0]
	}
	_, err = fsx.ScanBack(f, fi.Size(), maxAuditScan, maxAuditLine, func(line []byte) bool {
		if l, ok := s.openAudit(name, line); ok && l.e.Foreign == "" {
			last = l
			return false
		}
		return true
	})
	if err != nil {
		return last, lastByte, err
	}
	if last.mac == "" && fi.Size() > maxAuditScan {
		s.Log.Warn("audit: no sealed line in the file's last bytes: a new chain starts (verify shows the break)", "file", name, "scanned", maxAuditScan)
	}
	return last, lastByte, nil
}
