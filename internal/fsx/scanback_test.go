package fsx

import (
	"slices"
	"strings"
	"testing"
)

// TestScanBack: lines from the end, over chunk borders, an over-long line
// given as nil, the first line included.
func TestScanBack(t *testing.T) {
	const maxLine = 64 << 10
	long := strings.Repeat("z", maxLine+1)
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"empty", "", nil},
		{"one line", "a\n", []string{"a"}},
		{"no last newline", "a\nb", []string{"b", "a"}},
		{"empty lines", "a\n\nb\n", []string{"b", "", "a"}},
		{"over chunk borders", strings.Repeat("q", 70<<10) + "\nb\n", []string{"b", "<nil>"}},
		{"over-long first line", long + "\nb\n", []string{"b", "<nil>"}},
		{"over-long last line", "a\n" + long, []string{"<nil>", "a"}},
		{"a line just long enough", strings.Repeat("k", maxLine) + "\n", []string{"k*"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			atStart, err := ScanBack(strings.NewReader(tc.data), int64(len(tc.data)), 1<<30, maxLine, func(line []byte) bool {
				switch {
				case line == nil:
					got = append(got, "<nil>")
				case len(line) > 10:
					got = append(got, string(line[:1])+"*")
				default:
					got = append(got, string(line))
				}
				return true
			})
			if err != nil || !atStart {
				t.Fatal(err, atStart)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
