package actions

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestParseSelection(t *testing.T) {
	st := spool.NewStore(fixture.Spool(t), nil)
	many := make([]string, MaxBulk+1)
	for i := range many {
		many[i] = "api/a5"
	}
	for _, tc := range []struct {
		name string
		in   []string
		want string // the refs joined, or the refusal
	}{
		{"two", []string{"api/a5", "web/w3"}, "api/a5 web/w3"},
		{"a duplicate dropped", []string{"api/a5", "api/a5"}, "api/a5"},
		{"none", nil, "select at least one task"},
		{"no lane", []string{"a5"}, `not a task: "a5"`},
		{"a path", []string{"api/../x"}, "not a task"},
		{"too many", many, "at most 500 tasks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refs, err := ParseSelection(st, tc.in)
			var got []string
			for _, r := range refs {
				got = append(got, r.String())
			}
			var rf *Refused
			if err != nil && !errors.As(err, &rf) {
				t.Fatalf("%v is not a refusal", err)
			}
			if s := strings.Join(got, " "); (err == nil && s != tc.want) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("got %q, %v; want %q", s, err, tc.want)
			}
		})
	}
}

func TestPlanBulk(t *testing.T) {
	cfg := fixture.Spool(t)
	st := spool.NewStore(cfg, nil)
	// a3 failed for good (a content filter): its retry is marked.
	p := st.Layout.TaskPath(taskfile.KindAPI, taskfile.DirFailed, "a3")
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(data, []byte("errorClass: permanent\n")...), spool.FilePerm); err != nil {
		t.Fatal(err)
	}
	refs, err := ParseSelection(st, []string{"api/a1", "api/a3", "api/a4", "api/a5", "api/gone"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		op   string
		want string // per ref: "do", "again" or the state it is skipped in
	}{
		{"cancel", "success failed do do missing"},
		{"priority", "success failed running do missing"},
		{"retry", "success again running pending missing"},
	} {
		t.Run(tc.op, func(t *testing.T) {
			var got []string
			for _, s := range PlanBulk(st, tc.op, refs) {
				switch {
				case s.Again:
					got = append(got, "again")
				case s.Skip != "":
					got = append(got, s.Skip)
				default:
					got = append(got, "do")
				}
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("%s: %s, want %s", tc.op, g, tc.want)
			}
		})
	}
}

func TestApplyBulk(t *testing.T) {
	st := spool.NewStore(fixture.Spool(t), nil)
	refs, _ := ParseSelection(st, []string{"api/a5", "api/a6", "api/a1"})
	if _, err := ApplyBulk(st, "priority", "urgent", PlanBulk(st, "priority", refs)); err == nil {
		t.Error("an unknown level applied")
	}
	done, err := ApplyBulk(st, "cancel", "", PlanBulk(st, "cancel", refs))
	if err != nil || len(done) != 2 {
		t.Fatalf("cancel: %v %v", done, err)
	}
	for _, id := range []string{"a5", "a6"} {
		if _, err := os.Stat(st.Layout.CancelPath(taskfile.KindAPI, id)); err != nil {
			t.Errorf("no cancel request for %s: %v", id, err)
		}
	}
	if _, err := os.Stat(st.Layout.CancelPath(taskfile.KindAPI, "a1")); err == nil {
		t.Error("a cancel request for a finished task")
	}
}
