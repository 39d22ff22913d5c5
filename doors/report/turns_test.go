package report

import (
	"slices"
	"testing"
)

func TestTurnsTogether(t *testing.T) {
	r := func(id, follow string) Row { return Row{TaskID: id, Lane: "web", FollowUp: follow} }
	for _, tc := range []struct {
		name string
		in   []Row
		want []string
	}{
		{"no conversation keeps the order", []Row{r("a", ""), r("b", "")}, []string{"a", "b"}},
		{"turns after their chat's first", []Row{r("draft", ""), r("other", ""), r("shorter", "draft"), r("x", ""), r("title", "shorter")},
			[]string{"draft", "shorter", "title", "other", "x"}},
		{"a parent not listed", []Row{r("a", "gone"), r("b", "")}, []string{"a", "b"}},
		{"a cycle stays whole", []Row{r("a", "b"), r("b", "a"), r("c", "")}, []string{"c", "a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, x := range turnsTogether(tc.in) {
				got = append(got, x.TaskID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("turnsTogether = %v, want %v", got, tc.want)
			}
		})
	}
}
