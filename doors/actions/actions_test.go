package actions

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/doors/tableimport"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestRowTaskID(t *testing.T) {
	for _, tc := range []struct {
		batch string
		n     int
		want  string
	}{
		{"spring", 2, "spring-r2"},
		{"spring_2026-a", 41, "spring_2026-a-r41"},
		{"春季选题", 3, "b-"},
		{"spring 春", 3, "spring-"},
		{"", 2, "b-"},
	} {
		got := RowTaskID(tc.batch, tc.n)
		if !strings.HasPrefix(got, tc.want) || !strings.HasSuffix(got, fmt.Sprintf("-r%d", tc.n)) || !taskfile.ValidTaskID(got) {
			t.Errorf("RowTaskID(%q, %d) = %q, want %s...", tc.batch, tc.n, got, tc.want)
		}
		if again := RowTaskID(tc.batch, tc.n); again != got {
			t.Errorf("not stable: %q then %q", got, again)
		}
	}
	if RowTaskID("春季", 2) == RowTaskID("秋季", 2) {
		t.Error("two batches, one id")
	}
}

func TestTableDrops(t *testing.T) {
	cfg := fixture.Spool(t)
	st := spool.NewStore(cfg, nil)
	rows := []tableimport.Row{
		{N: 2, Model: "writer", Content: "one"},
		{N: 3, Model: "nope", Content: "two"},
		{N: 4, Model: "writer", Err: "column topic is empty"},
		{N: 5, Model: "writer", Content: "five", Priority: "urgent"},
		{N: 6, Model: "thinker", Content: "web"},
	}
	check := func(want map[int]string) []RowDrop {
		t.Helper()
		drops := TableDrops(st, "t", rows)
		for _, d := range drops {
			if w := want[d.N]; (w == "") != (d.Err == "") || !strings.Contains(d.Err, w) {
				t.Errorf("row %d: %q, want %q", d.N, d.Err, w)
			}
		}
		return drops
	}
	drops := check(map[int]string{3: `model: "nope" is not in the config`, 4: "column topic is empty", 5: "priority"})
	if n, err := DropRows(st, drops); n != 2 || err != nil {
		t.Fatalf("dropped %d: %v", n, err)
	}
	if drops[4].Drop.Lane != taskfile.KindWeb || drops[0].Drop.ID != "t-r2" {
		t.Errorf("drops %+v", drops)
	}
	// The same rows again: the dropped ones are duplicates.
	check(map[int]string{2: "already waiting", 3: "not in the config", 4: "empty", 5: "priority", 6: "already waiting"})
}

func TestCancel(t *testing.T) {
	cfg := fixture.Spool(t)
	st := spool.NewStore(cfg, nil)
	for _, tc := range []struct {
		id   string
		want CancelOutcome
	}{{"a5", CancelRequested}, {"a4", CancelRequested}, {"a1", CancelFinished}, {"zz", CancelNotFound}} {
		if got, err := Cancel(st, Locate(st, taskfile.KindAPI, tc.id)); got != tc.want || err != nil {
			t.Errorf("Cancel(%s) = %v, %v; want %v", tc.id, got, err, tc.want)
		}
	}
	var rf *Refused
	if err := SetPriority(st, Locate(st, taskfile.KindAPI, "a1"), taskfile.PriorityHigh); !errors.Is(err, ErrNotPending) {
		t.Errorf("priority of a done task: %v", err)
	}
	if err := SetPriority(st, Locate(st, taskfile.KindAPI, "a6"), "urgent"); !errors.As(err, &rf) || rf.Field != "priority" {
		t.Errorf("priority urgent: %v", err)
	}
	if _, err := PauseFile(st, taskfile.KindAPI, "../x"); !errors.As(err, &rf) || rf.Field != "host" {
		t.Errorf("host ../x: %v", err)
	}
	if out, _, err := ReleaseAccount(st, "ops1", time.Now()); out != ReleaseNotHeld || err != nil {
		t.Errorf("release: %v %v", out, err)
	}
}
