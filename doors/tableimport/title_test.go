package tableimport

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestMapping_RowsTitle: a row's task is named by its title column; with
// none, a template's row by its key columns (the cells the template
// names, each once, the empty ones left out); a row whose content is a
// column has no title (its content names it). A title is one line of at
// most 200 characters.
func TestMapping_RowsTitle(t *testing.T) {
	tb, err := Read([]byte(csvZH))
	if err != nil {
		t.Fatal(err)
	}
	long := &Table{Header: []string{"a"}, Rows: [][]string{{strings.Repeat("长", 300) + "\n第二行"}}, N: []int{2}}
	for _, tc := range []struct {
		name string
		tb   *Table
		m    Mapping
		want []string
	}{
		{"title column", tb, Mapping{Template: "为{{channel}}写{{topic}}", TitleCol: "topic"}, []string{"春茶上新", "秋季新品", "空行之后"}},
		{"key columns", tb, Mapping{Template: "为{{channel}}写{{topic}}，再写一遍{{topic}}"}, []string{"公众号 · 春茶上新", "微博 · 秋季新品", "空行之后"}},
		{"content column", tb, Mapping{ContentCol: "topic"}, []string{"", "", ""}},
		{"one line, clipped", long, Mapping{ContentCol: "a", TitleCol: "a"}, []string{strings.Repeat("长", 199) + "…"}},
	} {
		rows, err := tc.m.Rows(tc.tb)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i, r := range rows {
			if r.Title != tc.want[i] || utf8.RuneCountInString(r.Title) > 200 || strings.Contains(r.Title, "\n") {
				t.Errorf("%s: row %d titled %q, want %q", tc.name, r.N, r.Title, tc.want[i])
			}
		}
	}
	if _, err := (Mapping{ContentCol: "topic", TitleCol: "name"}).Rows(tb); err == nil || !strings.Contains(err.Error(), `title: no column "name"`) {
		t.Errorf("a title column the table lacks: %v", err)
	}
}
