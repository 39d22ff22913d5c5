package spool

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/seal"
)

// Reading the audit trail: one line opened against its seal, the chain
// of a month's file verified, and the bounded tail the pages show.

// openAudit reads one line of the audit file name: its entry, with
// Foreign set when its seal is missing or wrong, and its seal when it is
// right. ok is false for a line that is not an entry at all.
func (s *Store) openAudit(name string, line []byte) (l auditLine, ok bool) {
	if len(line) == 0 {
		return l, false
	}
	js, mac, sealed := bytes.Cut(line, []byte(auditSep()))
	if err := json.Unmarshal(js, &l.e); err != nil {
		return auditLine{e: AuditEntry{Foreign: "not an audit entry"}}, false
	}
	if !sealed {
		l.e.Foreign = seal.ErrUnsealed.Error()
		return l, true
	}
	data := make([]byte, 0, len(line)+2)
	data = append(data, js...)
	data = append(data, '\n')
	data = append(data, seal.Trailer...)
	data = append(data, mac...)
	data = append(data, '\n')
	if _, err := s.key().Open(SealAudit, name, data); err != nil {
		l.e.Foreign = err.Error()
		return l, true
	}
	l.mac = string(mac)
	l.e.Unchained = l.e.Seq == 0
	return l, true
}

// OpenAuditLine reads one line of the audit file name: its entry, with
// Foreign set when its seal is missing or wrong. ok is false for a line
// that is not an entry at all (nothing to show but that it is foreign).
func (s *Store) OpenAuditLine(name string, line []byte) (e AuditEntry, ok bool) {
	l, ok := s.openAudit(name, line)
	return l.e, ok
}

// auditChain follows one file's chain, line by line in file order, and
// says where it breaks.
type auditChain struct {
	last    auditLine        // the last sealed line seen
	started bool             // a chained line has been seen
	seen    map[string]int64 // seal -> seq of the lines seen (for duplicates and order)
	known   bool             // the lines before the first are known (the file's start was read)
}

// step takes the next sealed line l and returns why the chain breaks
// before it, or "".
func (c *auditChain) step(l auditLine) (why string) {
	if c.seen == nil {
		c.seen = map[string]int64{}
	}
	if seq, dup := c.seen[l.mac]; dup {
		// The chain goes on from the line above the copy: the line
		// after a copy is no break of its own.
		if seq == 0 {
			return "a copy of a line above"
		}
		return fmt.Sprintf("a copy of line seq %d, which is above", seq)
	}
	defer func() {
		c.seen[l.mac] = l.e.Seq
		c.last = l
	}()
	if l.e.Seq == 0 {
		// Sealed before the chain (or by an older spoolgate beside a
		// newer one): not a link, never a break; the next chained line
		// names its seal all the same.
		return ""
	}
	first := !c.started
	c.started = true
	if l.e.Prev == c.last.mac {
		if l.e.Prev == "" && l.e.Seq != 1 {
			return fmt.Sprintf("seq %d names no line before it", l.e.Seq)
		}
		return ""
	}
	switch {
	case c.last.mac == "" && first && !c.known:
		return "" // the page read from the middle: what is above is not known
	case c.last.mac == "":
		return fmt.Sprintf("the line(s) above seq %d are missing", l.e.Seq)
	}
	if seq, ok := c.seen[l.e.Prev]; ok {
		return fmt.Sprintf("out of order: seq %d follows seq %d, not the line above it", l.e.Seq, seq)
	}
	if c.last.e.Seq > 0 && l.e.Seq > c.last.e.Seq+1 {
		n := l.e.Seq - c.last.e.Seq - 1
		return fmt.Sprintf("%d line(s) missing (or moved) between seq %d and seq %d", n, c.last.e.Seq, l.e.Seq)
	}
	if l.e.Prev == "" {
		return fmt.Sprintf("a new chain starts at seq %d below sealed lines", l.e.Seq)
	}
	return fmt.Sprintf("seq %d does not follow the line above it (a line missing, moved or edited)", l.e.Seq)
}

// AuditFinding is one thing `spoolgate audit verify` reports about a line.
type AuditFinding struct {
	Line    int    // 1-based line number in the file
	Break   string // why the chain breaks before this line ("" for none)
	Foreign string // why the line is not this installation's ("" for none)
	Entry   AuditEntry
}

// AuditReport is what VerifyAudit found in one file.
type AuditReport struct {
	Lines, Sealed, Unchained, Foreign int
	Breaks                            []AuditFinding
	Foreigns                          []AuditFinding
}

// VerifyAudit reads the audit file path whole, line by line (a line
// longer than maxAuditLine is junk), and reports each break of its chain
// with its line number, and each line that is not this installation's.
func (s *Store) VerifyAudit(path string) (AuditReport, error) {
	var rep AuditReport
	f, err := fsx.OpenNoFollow(path)
	if err != nil {
		return rep, fmt.Errorf("audit: %w", err)
	}
	defer f.Close()
	name := filepath.Base(path)
	c := auditChain{known: true}
	r := bufio.NewReaderSize(f, maxAuditLine)
	long := false
	for n := 1; ; {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = true
			continue
		}
		if len(line) > 0 || err == nil {
			trimmed := bytes.TrimRight(line, "\r\n")
			switch {
			case long:
				rep.Foreign++
				rep.Foreigns = append(rep.Foreigns, AuditFinding{Line: n, Foreign: "a line longer than " + strconv.Itoa(maxAuditLine) + " bytes"})
			case len(trimmed) == 0:
			default:
				l, ok := s.openAudit(name, trimmed)
				switch {
				case !ok:
					rep.Foreign++
					rep.Foreigns = append(rep.Foreigns, AuditFinding{Line: n, Foreign: "not an audit entry"})
				case l.e.Foreign != "":
					rep.Foreign++
					rep.Foreigns = append(rep.Foreigns, AuditFinding{Line: n, Foreign: l.e.Foreign, Entry: l.e})
				default:
					rep.Sealed++
					if l.e.Unchained {
						rep.Unchained++
					}
					if why := c.step(l); why != "" {
						rep.Breaks = append(rep.Breaks, AuditFinding{Line: n, Break: why, Entry: l.e})
					}
				}
			}
			long = false
			rep.Lines = n
			n++
		}
		if errors.Is(err, io.EOF) {
			return rep, nil
		}
		if err != nil {
			return rep, fmt.Errorf("audit %s: %w", name, err)
		}
	}
}

// AuditFiles lists the month files of the audit folder, oldest first.
func (s *Store) AuditFiles() ([]string, error) {
	dir := filepath.Join(s.Layout.Root, AuditDir)
	names, err := fsx.ReadDirNames(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	var out []string
	for _, n := range names {
		if _, err := time.Parse("2006-01.log", n); err == nil {
			out = append(out, filepath.Join(dir, n))
		}
	}
	slices.Sort(out)
	return out, nil
}

// Audit reads the audit lines of the last months (newest month last,
// each file's order kept) that match keep, and every break of the chain
// among the lines read (an entry with Break set, at its place). Of each
// file it reads the last sealed lines, bounded (see maxAuditLines), over
// whatever else the file holds; foreign lines that parse are returned
// too, marked, at most maxAuditForeign of each file.
func (s *Store) Audit(now time.Time, keep func(AuditEntry) bool) ([]AuditEntry, error) {
	dir := filepath.Join(s.Layout.Root, AuditDir)
	var out []AuditEntry
	for i := auditMonths - 1; i >= 0; i-- {
		name := now.UTC().AddDate(0, -i, 0).Format("2006-01") + ".log"
		es, err := s.auditTail(filepath.Join(dir, name), name, keep)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("audit %s: %w", name, err)
		}
		out = append(out, es...)
	}
	return out, nil
}

// auditTail reads one file's end (see Audit).
func (s *Store) auditTail(path, name string, keep func(AuditEntry) bool) ([]AuditEntry, error) {
	f, err := fsx.OpenNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fsx.NotRegularError{Path: path, Kind: fsx.KindOf(fi.Mode()), Want: fsx.WantFile}
	}
	type read struct {
		l      auditLine
		sealed bool
	}
	var back []read // newest first
	var sealedN, sealedBytes, foreignN int
	atStart, err := fsx.ScanBack(f, fi.Size(), maxAuditScan, maxAuditLine, func(line []byte) bool {
		l, ok := s.openAudit(name, line)
		switch {
		case ok && l.e.Foreign == "":
			back = append(back, read{l, true})
			sealedN++
			sealedBytes += len(line) + 1
		case ok && foreignN < maxAuditForeign:
			back = append(back, read{l, false})
			foreignN++
		}
		return sealedN < maxAuditLines && sealedBytes < maxAuditRead
	})
	if err != nil {
		return nil, err
	}
	c := auditChain{known: atStart}
	var out []AuditEntry
	for i := len(back) - 1; i >= 0; i-- {
		r := back[i]
		if r.sealed {
			if why := c.step(r.l); why != "" {
				out = append(out, AuditEntry{Time: r.l.e.Time, Break: why, File: name})
			}
		}
		if keep(r.l.e) {
			out = append(out, r.l.e)
		}
	}
	return out, nil
}

// AuditOf is the audit of one task (LANE/ID) or, with task "", of one
// batch, with the breaks of the chain among the lines read.
func (s *Store) AuditOf(now time.Time, task, batch string) ([]AuditEntry, error) {
	return s.Audit(now, func(e AuditEntry) bool {
		if task != "" {
			return slices.Contains(e.Tasks, task)
		}
		return batch != "" && e.Batch == batch
	})
}
