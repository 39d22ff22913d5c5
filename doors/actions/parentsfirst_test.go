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
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ParentsFirst(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range out {
				got = append(got, x.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ParentsFirst = %v, want %v", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		in   []Drop
		want string
	}{
		{"two waiting for each other", []Drop{d("ping", "pong"), d("pong", "ping")}, "ping.yaml: after: a cycle: ping waits for pong waits for ping"},
		{"a cycle of three behind a free task", []Drop{d("free"), d("a", "c"), d("b", "a"), d("c", "b")}, "a.yaml: after: a cycle: a waits for c waits for b waits for a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tc.in {
				tc.in[i].Src = tc.in[i].ID + ".yaml"
			}
			if _, err := ParentsFirst(tc.in); err == nil || err.Error() != tc.want {
				t.Errorf("ParentsFirst: %v, want %q", err, tc.want)
			}
		})
	}
}
