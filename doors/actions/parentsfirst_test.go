package actions

import (
	"slices"
	"testing"
)

func TestParentsFirst(t *testing.T) {
	d := func(id string, after ...string) Drop { return Drop{ID: id, After: after} }
	for _, tc := range []struct {
		name string
		in   []Drop
		want []string
	}{
		{"no chain keeps the order", []Drop{d("b"), d("a")}, []string{"b", "a"}},
		{"a pipeline given backwards", []Drop{d("summary", "article"), d("article", "outline"), d("outline")}, []string{"outline", "article", "summary"}},
		{"a parent outside the submission", []Drop{d("x", "elsewhere"), d("y")}, []string{"x", "y"}},
		{"a cycle: both dropped", []Drop{d("ping", "pong"), d("pong", "ping")}, []string{"pong", "ping"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, x := range ParentsFirst(tc.in) {
				got = append(got, x.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ParentsFirst = %v, want %v", got, tc.want)
			}
		})
	}
}
