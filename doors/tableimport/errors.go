package tableimport

import (
	"fmt"
	"strings"
)

// MappingFault names what a MappingError found wrong with a mapping.
type MappingFault int

// What a MappingError can be about.
const (
	MapTemplateColumn MappingFault = iota + 1 // the template's {{Name}} is no column's header
	MapTemplateOpen                           // a {{ is never closed: Name is the template from it on
	MapTemplateEmpty                          // a {{}} with no name in it
	MapNoColumn                               // Field names the column Name, which the table lacks
	MapNoContent                              // neither a template nor a content column
	MapThenModel                              // a chained task's content without its model
)

// MappingError is a mapping's own error (not a row's): it says what is
// wrong and keeps the operator's names apart from the words, so a page
// can say it in its operator's language and show the names as written.
type MappingError struct {
	What MappingFault
	// Field is the mapping's field at fault as the CLI's flags name it:
	// template, content, prompt, model, priority, output, follow-up, then.
	Field   string
	Name    string   // the column or the template's text, as written
	Columns []string // the table's header, for a name it lacks
}

func (e *MappingError) Error() string {
	cols := clip(strings.Join(e.Columns, ", "))
	switch e.What {
	case MapTemplateColumn:
		return fmt.Sprintf("template: {{%s}}: no column has this header (columns: %s)", clip(e.Name), cols)
	case MapTemplateOpen:
		return fmt.Sprintf("template: %q is not closed with }}", clip(e.Name))
	case MapTemplateEmpty:
		return "template: {{}} names no column"
	case MapNoColumn:
		return fmt.Sprintf("%s: no column %q (columns: %s)", e.Field, clip(e.Name), cols)
	case MapNoContent:
		return "content: give a template or the content's column"
	case MapThenModel:
		return "then: a chained task's content needs its model (then-model)"
	}
	return e.Field + ": not mapped"
}

// TableFault names what a TableError found wrong with a file.
type TableFault int

// What a TableError can be about; the ones marked size match ErrTooLarge.
const (
	TableUnreadable  TableFault = iota + 1 // not text in the encoding Name detected
	TableCSV                               // the CSV reader's error, Err
	TableXLSX                              // not a workbook excelize reads (Err), at Row when known
	TableNoSheet                           // a workbook without a sheet
	TableEmpty                             // no row with a cell in it
	TableHeaderTwice                       // the header names column Name twice
	TableFile                              // size: the file is Size bytes, more than Max
	TableZipBomb                           // size: the XLSX's part Name unpacks past Max in all
	TableRows                              // size: more than Max rows
	TableColumns                           // size: Row has more than Max columns
	TableCell                              // size: a cell of Row is more than Max bytes
	TableCells                             // size: the cells up to Row hold more than Max bytes
)

// TableError is why a file is not a table that can be imported, with its
// numbers and names apart from the words, so a page can say it in its
// operator's language. Err is its cause: ErrTooLarge for a refusal for
// size, a decoder's or a reader's error, or nil.
type TableError struct {
	What TableFault
	Row  int // the spreadsheet's row, counting from 1 (0 when not about a row)
	Size int64
	Max  int64
	Name string // the encoding, the column, or the workbook's part
	Err  error
}

func (e *TableError) Error() string {
	var s string
	switch e.What {
	case TableUnreadable:
		s = "not readable as " + e.Name
	case TableCSV:
		s = "csv"
	case TableXLSX:
		s = "xlsx"
		if e.Row > 0 {
			s = fmt.Sprintf("xlsx: row %d", e.Row)
		}
	case TableNoSheet:
		s = "xlsx: no sheet"
	case TableEmpty:
		s = "the table is empty"
	case TableHeaderTwice:
		s = fmt.Sprintf("the header names column %q twice", e.Name)
	case TableFile:
		s = fmt.Sprintf("the file is %d MiB, more than %d MiB", e.Size>>20, e.Max>>20)
	case TableZipBomb:
		s = fmt.Sprintf("xlsx: %s unpacks to far more than the file (a zip bomb?), over %d MiB in all", e.Name, e.Max>>20)
	case TableRows:
		s = fmt.Sprintf("more than %d rows", e.Max)
	case TableColumns:
		s = fmt.Sprintf("row %d: more than %d columns", e.Row, e.Max)
	case TableCell:
		s = fmt.Sprintf("row %d: a cell of more than %d KiB", e.Row, e.Max>>10)
	case TableCells:
		s = fmt.Sprintf("row %d: the cells hold more than %d MiB in all", e.Row, e.Max>>20)
	default:
		s = "not a table"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap is the cause: a refusal for size unwraps to ErrTooLarge.
func (e *TableError) Unwrap() error { return e.Err }

// tooLarge is a refusal for size.
func tooLarge(what TableFault, row int, max int64) *TableError {
	return &TableError{What: what, Row: row, Max: max, Err: ErrTooLarge}
}
