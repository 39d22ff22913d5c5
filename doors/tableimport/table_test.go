package tableimport

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"
)

const csvZH = "channel,topic,tone\n公众号,春茶上新,轻松\n微博,秋季新品,正式\n,空行之后,活泼\n"

func gb18030(t *testing.T, s string) []byte {
	t.Helper()
	b, err := simplifiedchinese.GB18030.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func utf16(t *testing.T, s string, bom bool, be bool) []byte {
	t.Helper()
	order, b := unicode.LittleEndian, unicode.IgnoreBOM
	if be {
		order = unicode.BigEndian
	}
	if bom {
		b = unicode.UseBOM
	}
	out, err := unicode.UTF16(order, b).NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// xlsx builds a workbook of header and rows with excelize, as Excel saves one.
func xlsx(t testing.TB, header []string, rows [][]string) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	put := func(r int, vals []string) {
		for c, v := range vals {
			cell, _ := excelize.CoordinatesToCellName(c+1, r)
			if err := f.SetCellStr("Sheet1", cell, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	put(1, header)
	for i, r := range rows {
		put(i+2, r)
	}
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRead(t *testing.T) {
	want := [][]string{{"公众号", "春茶上新", "轻松"}, {"微博", "秋季新品", "正式"}, {"", "空行之后", "活泼"}}
	for _, tc := range []struct {
		name   string
		data   []byte
		format string
	}{
		{"utf-8", []byte(csvZH), "csv utf-8"},
		{"utf-8 BOM", append([]byte{0xEF, 0xBB, 0xBF}, csvZH...), "csv utf-8 (BOM)"},
		{"gb18030", gb18030(t, csvZH), "csv gb18030"},
		{"utf-16le BOM", utf16(t, csvZH, true, false), "csv utf-16"},
		{"utf-16be BOM", utf16(t, csvZH, true, true), "csv utf-16"},
		{"utf-16le no BOM", utf16(t, strings.ReplaceAll(csvZH, "公众号", "WeChat account"), false, false), "csv utf-16"},
		{"semicolons", []byte(strings.ReplaceAll(csvZH, ",", ";")), "csv utf-8"},
		{"CRLF", []byte(strings.ReplaceAll(csvZH, "\n", "\r\n")), "csv utf-8"},
		{"xlsx", xlsx(t, []string{"channel", "topic", "tone"}, want), "xlsx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := Read(tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if tb.Format != tc.format || strings.Join(tb.Header, "|") != "channel|topic|tone" || len(tb.Rows) != 3 {
				t.Fatalf("%s: %q %q", tb.Format, tb.Header, tb.Rows)
			}
			w := want
			if tc.name == "utf-16le no BOM" {
				w = [][]string{{"WeChat account", "春茶上新", "轻松"}, want[1], want[2]}
			}
			for i := range w {
				if got := strings.Join(tb.Rows[i], "|"); got != strings.Join(w[i], "|") && !(tc.name == "xlsx" && i == 2 && got == "|空行之后|活泼") {
					t.Errorf("row %d = %q, want %q", tb.N[i], got, w[i])
				}
			}
			if tb.N[0] != 2 || tb.N[2] != 4 {
				t.Errorf("row numbers %v", tb.N)
			}
		})
	}
}

func TestRead_Refused(t *testing.T) {
	// A zip bomb: a small XLSX whose one part unpacks to 4 MiB of zeros, a thousand times what it weighs.
	var bomb bytes.Buffer
	zw := zip.NewWriter(&bomb)
	w, _ := zw.Create("xl/worksheets/sheet1.xml")
	zero := make([]byte, 1<<20)
	for range 4 {
		w.Write(zero)
	}
	zw.Close()
	for _, tc := range []struct {
		name string
		data []byte
		want string
		size bool
	}{
		{"50 MB", bytes.Repeat([]byte("a,b\n"), 50<<20/4), "more than 8 MiB", true},
		{"zip bomb", bomb.Bytes(), "zip bomb", true},
		{"empty", nil, "empty", false},
		{"header twice", []byte("a,a\n1,2\n"), `column "a" twice`, false},
		{"not xlsx", []byte("PK\x03\x04garbage"), "xlsx", false},
		{"too many columns", []byte(strings.Repeat("c,", 300) + "\n"), "columns", true},
		{"an 8 MiB line of commas", []byte(strings.Repeat(",", MaxFile)), "csv: line 1 is 8 MiB long, more than the 1 MiB a line may be", true},
		{"a long third line", []byte("a,b\n1,2\n" + strings.Repeat(",", MaxLine+1) + "\n"), "csv: line 3 is", true},
		{"a long last line without a newline", []byte("a,b\n" + strings.Repeat("x", MaxLine+1)), "csv: line 2 is", true},
		{"cells past the table's total", xlsxShared(t, 300, 60<<10), "more than 16 MiB in all", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrTooLarge) != tc.size {
				t.Errorf("err %v, want %q (too large: %v)", err, tc.want, tc.size)
			}
		})
	}
	if bomb.Len() > 1<<20 {
		t.Fatalf("the bomb weighs %d", bomb.Len())
	}
}

// xlsxShared is an XLSX of rows rows whose cell names one shared string
// of n bytes: small on disk, rows×n once read.
func xlsxShared(t testing.TB, rows, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	put := func(name, body string) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	put("[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>`)
	put("_rels/.rels", `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`)
	put("xl/workbook.xml", `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`)
	put("xl/_rels/workbook.xml.rels", `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>`)
	put("xl/sharedStrings.xml", `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="2" uniqueCount="2"><si><t>a</t></si><si><t>`+strings.Repeat("x", n)+`</t></si></sst>`)
	var sheet strings.Builder
	sheet.WriteString(`<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row>`)
	for r := 2; r <= rows+1; r++ {
		fmt.Fprintf(&sheet, `<row r="%d"><c r="A%d" t="s"><v>1</v></c></row>`, r, r)
	}
	sheet.WriteString(`</sheetData></worksheet>`)
	put("xl/worksheets/sheet1.xml", sheet.String())
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestMapping_Rows(t *testing.T) {
	tb, err := Read([]byte(csvZH))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		m    Mapping
		want []string // content or "ERR:" + the row's problem
		err  string
	}{
		{name: "template", m: Mapping{Template: "为{{channel}}写一篇关于{{ topic }}的稿子，语气{{tone}}", Model: "writer"},
			want: []string{"为公众号写一篇关于春茶上新的稿子，语气轻松", "为微博写一篇关于秋季新品的稿子，语气正式", "ERR:column channel is empty"}},
		{name: "column", m: Mapping{ContentCol: "topic", ModelCol: "channel", Model: "writer"}, want: []string{"春茶上新", "秋季新品", "空行之后"}},
		{name: "no such column in the template", m: Mapping{Template: "{{topic}} {{audience}}"}, err: "{{audience}}: no column"},
		{name: "template not closed", m: Mapping{Template: "{{topic"}, err: "not closed"},
		{name: "empty name", m: Mapping{Template: "{{ }}"}, err: "names no column"},
		{name: "no content", m: Mapping{}, err: "give a template or the content's column"},
		{name: "no such column", m: Mapping{ContentCol: "body"}, err: `content: no column "body"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := tc.m.Rows(tb)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rows {
				got := r.Content
				if r.Err != "" {
					got = "ERR:" + r.Err
				}
				if got != tc.want[i] {
					t.Errorf("row %d = %q, want %q", r.N, got, tc.want[i])
				}
			}
			if tc.name == "column" && (rows[0].Model != "公众号" || rows[2].Model != "writer") {
				t.Errorf("models %q %q", rows[0].Model, rows[2].Model)
			}
		})
	}
}

// FuzzRead: no table, however malformed, panics, hangs or yields a row
// wider than its limits; a template expands to its text around the cells.
func FuzzRead(f *testing.F) {
	f.Add([]byte(csvZH), "为{{channel}}写{{topic}}")
	f.Add(append([]byte{0xFF, 0xFE}, 'a', 0, ',', 0, 'b', 0), "{{a}}")
	f.Add([]byte("a;b\n\"x;y\";z\n"), "{{")
	f.Add(xlsx(f, []string{"a", "b"}, [][]string{{"=1+1", "@x"}}), "{{ a }}-{{b}}")
	f.Fuzz(func(t *testing.T, data []byte, tmpl string) {
		tb, err := Read(data)
		if err != nil {
			return
		}
		if len(tb.Rows) > MaxRows || len(tb.Header) > MaxCols {
			t.Fatalf("%d rows, %d columns", len(tb.Rows), len(tb.Header))
		}
		rows, err := Mapping{Template: tmpl}.Rows(tb)
		if err != nil {
			return
		}
		for _, r := range rows {
			if len(r.Content)+len(r.Prompt) > MaxRow {
				t.Fatalf("row %d: content of %d bytes, more than a task may hold", r.N, len(r.Content))
			}
			if r.Err == "" && len(r.Content) > len(tmpl)+len(tmpl)/4*MaxCell {
				t.Fatalf("row %d: content of %d bytes from a template of %d", r.N, len(r.Content), len(tmpl))
			}
		}
	})
}

// table is a table of rows rows whose column a holds cell and b holds "b".
func table(rows int, cell string) *Table {
	t := &Table{Header: []string{"a", "b"}}
	for i := range rows {
		t.Rows = append(t.Rows, []string{cell, "b"})
		t.N = append(t.N, i+2)
	}
	return t
}

func TestMapping_RowsBounded(t *testing.T) {
	cell := strings.Repeat("x", 60<<10)
	for _, tc := range []struct {
		name string
		t    *Table
		m    Mapping
		what Limit
		want string
	}{
		{"a 1 KB template naming a 60 KB cell 200 times", table(3, cell), Mapping{Template: strings.Repeat("{{a}}", 200)}, LimitRow,
			"template: row 2 would fill to 11.7 MiB ({{a}} 200 times × 60 KiB), more than the 1 MiB a task may hold"},
		{"the weightiest placeholder is named", table(1, cell), Mapping{Template: strings.Repeat("{{b}}", 100) + strings.Repeat("{{a}}", 18)}, LimitRow,
			"({{a}} 18 times × 60 KiB)"},
		{"a prompt counts with the content", table(1, cell), Mapping{Template: strings.Repeat("{{a}}", 17), PromptCol: "a"}, LimitRow,
			"row 2 would fill to 1.1 MiB"},
		{"the whole import", table(600, cell), Mapping{Template: "{{a}}"}, LimitImport,
			"the rows would fill to 35.2 MiB in all, more than the 32 MiB an import may hold"},
		{"a template longer than a task", table(1, "x"), Mapping{Template: strings.Repeat("x", MaxRow+1)}, LimitTemplate, "template: 1.0 MiB, more than the 1 MiB a task may hold"},
		{"the whole import by column", table(600, cell), Mapping{ContentCol: "a"}, LimitImport, "an import may hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := tc.m.Rows(tc.t)
			var le *LimitError
			if !errors.As(err, &le) || le.What != tc.what || !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("rows %d, err %v, want %q", len(rows), err, tc.want)
			}
		})
	}
	// Just under both limits, the rows fill.
	rows, err := Mapping{Template: strings.Repeat("{{a}}", 17)}.Rows(table(16, cell))
	if err != nil || len(rows) != 16 || len(rows[15].Content) != 17*len(cell) {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
}

func TestTemplate_Expand(t *testing.T) {
	tmpl, err := ParseTemplate("<{{a}}|{{b}}>", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	cells := []string{"xxxx", "yy"}
	cell := func(c int) string { return cells[c] }
	for _, tc := range []struct {
		limit int
		want  string
		err   string
	}{
		{limit: 9, want: "<xxxx|yy>"},
		{limit: 8, err: "would fill to 9 B"},
		{limit: 3, err: "would fill to 5 B"}, // stops at the first part past the limit
	} {
		t.Run(fmt.Sprint(tc.limit), func(t *testing.T) {
			got, _, err := tmpl.Expand(cell, tc.limit)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || got != "" {
					t.Fatalf("%q, %v, want %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%q, %v", got, err)
			}
		})
	}
}

// FuzzTemplate: a template's size, computed without filling it, is the
// length it fills to, and filling refuses exactly past the limit.
func FuzzTemplate(f *testing.F) {
	f.Add("为{{channel}}写{{topic}}", "公众号", "春茶", 100)
	f.Add(strings.Repeat("{{channel}}", 50), strings.Repeat("x", 1000), "", 4096)
	f.Add("{{ topic }}{{", "a", "b", 0)
	f.Fuzz(func(t *testing.T, s, c0, c1 string, limit int) {
		tmpl, err := ParseTemplate(s, []string{"channel", "topic"})
		if err != nil || limit < 0 {
			return
		}
		cells := []string{c0, c1}
		cell := func(c int) string { return cells[c] }
		size, _, _, _ := tmpl.Size(cell)
		out, _, err := tmpl.Expand(cell, limit)
		switch {
		case size <= int64(limit) && (err != nil || int64(len(out)) != size):
			t.Fatalf("size %d, limit %d: %d bytes, %v", size, limit, len(out), err)
		case size > int64(limit) && (err == nil || out != ""):
			t.Fatalf("size %d past limit %d filled %d bytes", size, limit, len(out))
		}
	})
}
