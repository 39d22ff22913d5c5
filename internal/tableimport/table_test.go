package tableimport

import (
	"archive/zip"
	"bytes"
	"errors"
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
			if r.Err == "" && len(r.Content) > len(tmpl)+len(tmpl)/4*MaxCell {
				t.Fatalf("row %d: content of %d bytes from a template of %d", r.N, len(r.Content), len(tmpl))
			}
		}
	})
}
