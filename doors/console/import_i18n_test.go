package console

import (
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/doors/tableimport"
)

func TestImportLimit(t *testing.T) {
	row := &tableimport.LimitError{What: tableimport.LimitRow, Row: 7, Size: 12 << 20, Max: 1 << 20, Name: "topic", Count: 200, Cell: 60 << 10}
	for _, tc := range []struct {
		name string
		L    pageLabels
		e    *tableimport.LimitError
		want string
	}{
		{"row", labelsEN, row, "the template would fill row 7 to 12 MiB ({{topic}} 200 times × 60 KiB), more than the 1 MiB a task may hold"},
		{"row zh", labelsZH, row, "模板会把第 7 行填到 12 MiB（{{topic}} 出现 200 次 × 60 KiB），超过一个任务最多能有的 1 MiB"},
		{"row without a placeholder", labelsEN, &tableimport.LimitError{What: tableimport.LimitRow, Row: 2, Size: 2 << 20, Max: 1 << 20},
			"the template would fill row 2 to 2 MiB, more than the 1 MiB a task may hold"},
		{"import", labelsEN, &tableimport.LimitError{What: tableimport.LimitImport, Size: 40 << 20, Max: 32 << 20},
			"the rows would fill to 40 MiB in all, more than the 32 MiB an import may hold"},
		{"import zh", labelsZH, &tableimport.LimitError{What: tableimport.LimitImport, Size: 40 << 20, Max: 32 << 20}, "所有行填好后共 40 MiB，超过一次导入最多能有的 32 MiB"},
		{"line", labelsEN, &tableimport.LimitError{What: tableimport.LimitLine, Row: 3, Size: 8 << 20, Max: 1 << 20},
			"line 3 of the CSV is 8 MiB long, more than the 1 MiB a line may be"},
		{"template zh", labelsZH, &tableimport.LimitError{What: tableimport.LimitTemplate, Size: 3 << 20, Max: 1 << 20}, "模板本身有 3 MiB，超过一个任务最多能有的 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := importLimit(tc.L, tc.e)
			if got != tc.want || strings.Contains(got, "\n") {
				t.Errorf("%q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestRowRanges(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{[]int{2}, "2"},
		{[]int{2, 3, 4, 5}, "2–5"},
		{[]int{2, 3, 5, 7, 8}, "2–3, 5, 7–8"},
		{nil, ""},
	} {
		if got := rowRanges(tc.in); got != tc.want {
			t.Errorf("rowRanges(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
