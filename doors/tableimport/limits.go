package tableimport

import (
	"bytes"
	"fmt"
	"io"
)

// Bounds on what an import may fill (issue 50): a template naming a large
// cell many times multiplies it, so every row's size is computed from the
// template's placeholders and the row's cell lengths before anything is
// filled, and filling stops at the limit however the size was reached.
const (
	// MaxRow is what one row's content and prompt may fill to: the size
	// a task may have (taskfile.MaxTaskSize, 1 MiB), since the row becomes
	// one. Written out because a table is read without the spool
	// (internal/layering); TestLimits_matchTaskSize keeps the two equal.
	MaxRow = 1 << 20
	// MaxImport is what all of an import's rows may fill to together:
	// 10 000 rows of 3 KiB, far more than a day's batch, and what the
	// console keeps staged between the preview and the submit.
	MaxImport = 32 << 20
	// MaxLine bounds one physical line of a CSV: longer than a task may
	// be, it cannot be a row worth importing, and a line of commas is
	// one field per byte to the CSV reader (an 8 MiB line once took
	// 884 MB before the column limit refused it).
	MaxLine = MaxRow
	// MaxTable bounds the text of a table's cells in all: an XLSX can
	// name one shared string from every cell.
	MaxTable = 16 << 20
)

// Limit names what a LimitError found too large.
type Limit int

// What a LimitError can be about.
const (
	LimitRow      Limit = iota + 1 // one row's filled content and prompt
	LimitImport                    // all rows' filled content together
	LimitLine                      // one line of a CSV
	LimitTemplate                  // the template's own text
)

// LimitError is a refusal for size that says what would grow past which
// limit, so a page can say it in the operator's language. It matches
// ErrTooLarge.
type LimitError struct {
	What Limit
	Row  int   // the spreadsheet's row (LimitRow) or the CSV's line (LimitLine)
	Size int64 // what it would fill to, at least (0 when not known)
	Max  int64
	// The placeholder that weighs most in the row, when a template is why.
	Name  string
	Count int   // how many times the template names it
	Cell  int64 // its cell's length in the row
}

func (e *LimitError) Error() string {
	switch e.What {
	case LimitRow:
		s := fmt.Sprintf("template: row %d would fill to %s", e.Row, Bytes(e.Size))
		if e.Name != "" {
			s += fmt.Sprintf(" ({{%s}} %d times × %s)", clip(e.Name), e.Count, Bytes(e.Cell))
		}
		return s + fmt.Sprintf(", more than the %s a task may hold", Bytes(e.Max))
	case LimitImport:
		return fmt.Sprintf("the rows would fill to %s in all, more than the %s an import may hold", Bytes(e.Size), Bytes(e.Max))
	case LimitTemplate:
		return fmt.Sprintf("template: %s, more than the %s a task may hold", Bytes(e.Size), Bytes(e.Max))
	case LimitLine:
		return fmt.Sprintf("csv: line %d is %s long, more than the %s a line may be", e.Row, Bytes(e.Size), Bytes(e.Max))
	}
	return "too large"
}

// Is makes every LimitError match ErrTooLarge.
func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }

// Bytes is n as people read it: 812 B, 60.0 KiB, 11.7 MiB.
func Bytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return trimUnit(float64(n)/(1<<10), "KiB")
	default:
		return trimUnit(float64(n)/(1<<20), "MiB")
	}
}

func trimUnit(v float64, unit string) string {
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), unit)
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// lineLimit reads a CSV's text a whole line at a time and fails on a
// line longer than max before handing out any of it: the CSV reader holds
// a whole line, and a field for every separator in it, before it returns
// the record, so the line is bounded before the reader sees a byte of it.
type lineLimit struct {
	s       []byte
	off     int // what was read
	checked int // the end of the lines found short enough
	line    int // the lines checked
	max     int
	err     error
}

func newLineLimit(s []byte, max int) *lineLimit { return &lineLimit{s: s, max: max} }

func (l *lineLimit) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if l.off == len(l.s) {
		return 0, io.EOF
	}
	if l.off == l.checked {
		end, n := len(l.s), len(l.s)-l.off
		if j := bytes.IndexByte(l.s[l.off:], '\n'); j >= 0 {
			end, n = l.off+j+1, j
		}
		l.line++
		if n > l.max {
			l.err = &LimitError{What: LimitLine, Row: l.line, Size: int64(n), Max: int64(l.max)}
			return 0, l.err
		}
		l.checked = end
	}
	n := copy(p, l.s[l.off:l.checked])
	l.off += n
	return n, nil
}
