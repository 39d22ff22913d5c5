package tableimport

import (
	"archive/zip"
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

// xlsxNoSheet is a workbook whose sheet list is empty.
func xlsxNoSheet(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range map[string]string{
		"[Content_Types].xml": `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>`,
		"_rels/.rels":         `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
		"xl/workbook.xml":     `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheets></sheets></workbook>`,
	} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTableError_Error: each of the file's refusals is a *TableError
// whose text is the one `spoolgate submit --table` has always printed,
// and those for size still match ErrTooLarge.
func TestTableError_Error(t *testing.T) {
	var bomb bytes.Buffer
	zw := zip.NewWriter(&bomb)
	w, _ := zw.Create("xl/worksheets/sheet1.xml")
	w.Write(make([]byte, 4<<20))
	zw.Close()
	for _, tc := range []struct {
		name string
		data []byte
		err  *TableError // instead of data: an error no file makes now (the decoders replace what they cannot read)
		what TableFault
		want string
		size bool
	}{
		{name: "empty", data: []byte("\n,\n"), what: TableEmpty, want: "the table is empty"},
		{name: "header twice", data: []byte("主题,a,主题\n1,2,3\n"), what: TableHeaderTwice, want: `the header names column "主题" twice`},
		{name: "not a workbook", data: []byte("PK\x03\x04garbage"), what: TableXLSX, want: "xlsx: zip: not a valid zip file"},
		{name: "no sheet", data: xlsxNoSheet(t), what: TableNoSheet, want: "xlsx: no sheet"},
		{name: "file", data: make([]byte, MaxFile+1), what: TableFile, want: "the file is 8 MiB, more than 8 MiB: too large", size: true},
		{name: "zip bomb", data: bomb.Bytes(), what: TableZipBomb, want: "xlsx: xl/worksheets/sheet1.xml unpacks to far more than the file (a zip bomb?), over 64 MiB in all: too large", size: true},
		{name: "rows", data: []byte("a\n" + strings.Repeat("1\n", MaxRows+1)), what: TableRows, want: "more than 10000 rows: too large", size: true},
		{name: "rows of a workbook", data: xlsx(t, []string{"a"}, slices.Repeat([][]string{{"1"}}, MaxRows+1)), what: TableRows, want: "more than 10000 rows: too large", size: true},
		{name: "columns", data: []byte("a\n" + strings.Repeat("c,", MaxCols) + "c\n"), what: TableColumns, want: "row 2: more than 200 columns: too large", size: true},
		{name: "cell", data: []byte("a\n" + strings.Repeat("x", MaxCell+1) + "\n"), what: TableCell, want: "row 2: a cell of more than 64 KiB: too large", size: true},
		{name: "cells in all", data: xlsxShared(t, 300, 60<<10), what: TableCells, want: "row 275: the cells hold more than 16 MiB in all: too large", size: true},
		{name: "not readable", err: &TableError{What: TableUnreadable, Name: "gb18030"}, what: TableUnreadable, want: "not readable as gb18030"},
		{name: "not readable, with the decoder's reason", err: &TableError{What: TableUnreadable, Name: "utf-16", Err: errors.New("bad")}, what: TableUnreadable, want: "not readable as utf-16: bad"},
		{name: "a workbook's row", err: &TableError{What: TableXLSX, Row: 3, Err: errors.New("bad")}, what: TableXLSX, want: "xlsx: row 3: bad"},
		{name: "csv", err: &TableError{What: TableCSV, Err: errors.New("bad")}, what: TableCSV, want: "csv: bad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error = tc.err
			if tc.err == nil {
				_, err = Read(tc.data)
			}
			var te *TableError
			if !errors.As(err, &te) || te.What != tc.what || err.Error() != tc.want || errors.Is(err, ErrTooLarge) != tc.size {
				t.Errorf("%T %v\nwant a TableError %d: %q (too large: %v)", err, err, tc.what, tc.want, tc.size)
			}
		})
	}
}

// TestMappingError_Error: each of a mapping's own errors is a
// *MappingError with the text the CLI has always printed, the names in
// it as the operator wrote them.
func TestMappingError_Error(t *testing.T) {
	tb, err := Read([]byte(csvZH))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("主题", 30) // 180 bytes: clipped in the text, whole in the error's Name
	for _, tc := range []struct {
		name string
		m    Mapping
		what MappingFault
		data string // the error's Name
		want string
	}{
		{"a template's unknown column", Mapping{Template: "写{{ 受众 }}"}, MapTemplateColumn, "受众", "template: {{受众}}: no column has this header (columns: channel, topic, tone)"},
		{"a template not closed", Mapping{Template: "写{{topic"}, MapTemplateOpen, "{{topic", `template: "{{topic" is not closed with }}`},
		{"a long template not closed", Mapping{Template: "{{" + long}, MapTemplateOpen, "{{" + long, `template: "{{` + long[:75] + `..." is not closed with }}`},
		{"a template's empty name", Mapping{Template: "{{ }}"}, MapTemplateEmpty, "", "template: {{}} names no column"},
		{"a content column the table lacks", Mapping{ContentCol: "body"}, MapNoColumn, "body", `content: no column "body" (columns: channel, topic, tone)`},
		{"a follow-up column the table lacks", Mapping{ContentCol: "topic", FollowUpCol: "追问"}, MapNoColumn, "追问", `follow-up: no column "追问" (columns: channel, topic, tone)`},
		{"no content", Mapping{}, MapNoContent, "", "content: give a template or the content's column"},
		{"a chain without its model", Mapping{ContentCol: "topic", Then: "总结 {{result}}"}, MapThenModel, "", "then: a chained task's content needs its model (then-model)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.m.Rows(tb)
			var me *MappingError
			if !errors.As(err, &me) || me.What != tc.what || me.Name != tc.data || err.Error() != tc.want || errors.Is(err, ErrTooLarge) {
				t.Errorf("%T %v\nwant a MappingError %d naming %q: %q", err, err, tc.what, tc.data, tc.want)
			}
		})
	}
}
