// Package tableimport reads an operator's table (CSV in UTF-8, UTF-16 or
// GB18030, or XLSX) and turns its rows into task fields by named columns
// or a {{column}} template, with every row's problem numbered and the
// file's and the mapping's own errors typed (TableError, MappingError,
// LimitError) for a page to say in its operator's language.
package tableimport

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// Limits: a table an operator exports is a few hundred KiB; anything far
// larger, or an XLSX that unpacks to far more than it weighs (a zip
// bomb), is refused before it is parsed.
const (
	MaxFile     = 8 << 20  // the upload
	MaxUnpacked = 64 << 20 // an XLSX's parts, unpacked, in all
	MaxRows     = 10000
	MaxCols     = 200
	MaxCell     = 64 << 10
)

// ErrTooLarge matches every refusal for size.
var ErrTooLarge = errors.New("too large")

// Table is a header row and the rows under it. N[i] is row i's number as
// the spreadsheet shows it (the header is row 1).
type Table struct {
	Header []string
	Rows   [][]string
	N      []int
	Format string // csv (and its encoding) or xlsx
}

// Read reads a CSV or XLSX file's bytes: XLSX by its zip signature, CSV
// otherwise, its encoding detected (a UTF-8 or UTF-16 byte-order mark,
// UTF-16 without one by its zero bytes, valid UTF-8, else GB18030).
func Read(data []byte) (*Table, error) {
	if len(data) > MaxFile {
		return nil, &TableError{What: TableFile, Size: int64(len(data)), Max: MaxFile, Err: ErrTooLarge}
	}
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		return readXLSX(data)
	}
	text, enc, err := decode(data)
	if err != nil {
		return nil, err
	}
	return readCSV(text, enc)
}

// decode turns a CSV's bytes into UTF-8 text and names their encoding;
// UTF-8 comes back as data itself, not copied.
func decode(data []byte) ([]byte, string, error) {
	var e transform.Transformer
	name := "utf-8"
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return data[3:], "utf-8 (BOM)", nil
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		e, name = unicode.BOMOverride(unicode.UTF8.NewDecoder()), "utf-16"
	case utf16Guess(data) != nil:
		e, name = utf16Guess(data).NewDecoder(), "utf-16"
	case utf8.Valid(data):
		return data, name, nil
	default:
		e, name = simplifiedchinese.GB18030.NewDecoder(), "gb18030"
	}
	out, _, err := transform.Bytes(e, data)
	if err != nil {
		return nil, name, &TableError{What: TableUnreadable, Name: name, Err: err}
	}
	if !utf8.Valid(out) {
		return nil, name, &TableError{What: TableUnreadable, Name: name}
	}
	return out, name, nil
}

// utf16Guess: text without a BOM whose odd or even bytes are mostly zero
// is UTF-16 (ASCII-heavy tables, as Excel's "Unicode text" writes them).
func utf16Guess(data []byte) encoding.Encoding {
	n := min(len(data), 4096) &^ 1
	if n < 4 {
		return nil
	}
	var even, odd int
	for i := 0; i < n; i += 2 {
		if data[i] == 0 {
			even++
		}
		if data[i+1] == 0 {
			odd++
		}
	}
	switch half := n / 2; {
	case odd > half*2/5 && even == 0:
		return unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
	case even > half*2/5 && odd == 0:
		return unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	}
	return nil
}

func readCSV(text []byte, enc string) (*Table, error) {
	r := csv.NewReader(newLineLimit(text, MaxLine))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	// A semicolon- or tab-separated export (Excel in some locales): the
	// separator the first line has most of.
	first, _, _ := bytes.Cut(text, []byte("\n"))
	count := func(sep string) int { return bytes.Count(first, []byte(sep)) }
	if c := count(","); count(";") > c || count("\t") > c {
		r.Comma = ';'
		if count("\t") > count(";") {
			r.Comma = '\t'
		}
	}
	var recs [][]string
	var size int
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		var le *LimitError
		if errors.As(err, &le) {
			return nil, le
		}
		if err != nil {
			return nil, &TableError{What: TableCSV, Err: err}
		}
		// Each record checked as it comes, not once all are held.
		if err := checkRecord(len(recs)+1, rec, &size); err != nil {
			return nil, err
		}
		recs = append(recs, rec)
		if len(recs) > MaxRows+1 {
			return nil, tooLarge(TableRows, 0, MaxRows)
		}
	}
	return build(recs, "csv "+enc)
}

func readXLSX(data []byte) (*Table, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, &TableError{What: TableXLSX, Err: err}
	}
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if total > MaxUnpacked || f.UncompressedSize64 > 100*uint64(max(f.CompressedSize64, 1024)) {
			return nil, &TableError{What: TableZipBomb, Name: f.Name, Max: MaxUnpacked, Err: ErrTooLarge}
		}
	}
	x, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{UnzipSizeLimit: MaxUnpacked, UnzipXMLSizeLimit: MaxUnpacked})
	if err != nil {
		return nil, &TableError{What: TableXLSX, Err: err}
	}
	defer x.Close()
	sheets := x.GetSheetList()
	if len(sheets) == 0 {
		return nil, &TableError{What: TableNoSheet}
	}
	// Cell values as Excel shows them, formulas not evaluated: a cell's
	// formula is never run, its cached value is what was saved.
	// Row by row, never GetRows: a few bytes can declare a cell at row
	// 1048576 or column XFD, and the whole grid would be built.
	rows, err := x.Rows(sheets[0])
	if err != nil {
		return nil, &TableError{What: TableXLSX, Err: err}
	}
	defer rows.Close()
	var recs [][]string
	var xsize int
	for rows.Next() {
		if len(recs) > MaxRows {
			return nil, tooLarge(TableRows, 0, MaxRows)
		}
		rec, err := rows.Columns()
		if err != nil {
			return nil, &TableError{What: TableXLSX, Row: len(recs) + 1, Err: err}
		}
		if err := checkRecord(len(recs)+1, rec, &xsize); err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	if err := rows.Error(); err != nil {
		return nil, &TableError{What: TableXLSX, Err: err}
	}
	return build(recs, "xlsx")
}

// checkRecord refuses record n for its columns or a cell's size, and
// the table once its cells' text, added up in size, passes MaxTable.
func checkRecord(n int, rec []string, size *int) error {
	if len(rec) > MaxCols {
		return tooLarge(TableColumns, n, MaxCols)
	}
	for _, c := range rec {
		if len(c) > MaxCell {
			return tooLarge(TableCell, n, MaxCell)
		}
		*size += len(c)
	}
	if *size > MaxTable {
		return tooLarge(TableCells, n, MaxTable)
	}
	return nil
}

// build takes the first non-empty row as the header; rows left empty are
// skipped, their numbers kept for the others.
func build(recs [][]string, format string) (*Table, error) {
	t := &Table{Format: format}
	for i, rec := range recs {
		if len(rec) > MaxCols {
			return nil, tooLarge(TableColumns, i+1, MaxCols)
		}
		empty := true
		for j, c := range rec {
			if len(c) > MaxCell {
				return nil, tooLarge(TableCell, i+1, MaxCell)
			}
			rec[j] = strings.TrimSpace(c)
			empty = empty && rec[j] == ""
		}
		if empty {
			continue
		}
		if t.Header == nil {
			t.Header = rec
			continue
		}
		t.Rows = append(t.Rows, rec)
		t.N = append(t.N, i+1)
	}
	if t.Header == nil {
		return nil, &TableError{What: TableEmpty}
	}
	seen := map[string]bool{}
	for _, h := range t.Header {
		if h != "" && seen[h] {
			return nil, &TableError{What: TableHeaderTwice, Name: h}
		}
		seen[h] = true
	}
	return t, nil
}

// Col is the index of the column named name (its header), or -1.
func (t *Table) Col(name string) int {
	for i, h := range t.Header {
		if h == name {
			return i
		}
	}
	return -1
}

// Cell is row i's cell in column c ("" past its end or for c < 0).
func (t *Table) Cell(i, c int) string {
	if c < 0 || c >= len(t.Rows[i]) {
		return ""
	}
	return t.Rows[i][c]
}
