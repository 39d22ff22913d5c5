package status

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/status/timeline"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func rec(n int, start time.Time, d time.Duration, outcome, account string) taskfile.AttemptRecord {
	r := taskfile.AttemptRecord{N: n, ClaimedAt: start, StartedAt: start, Outcome: outcome, Account: account, Owner: "here:1"}
	if outcome != "" {
		r.EndedAt = start.Add(d)
	}
	return r
}

// Every attempt recorded in a task file in the span is one bar, in the
// row of its session (web) or of the lowest free slot (API), in the
// colour of its outcome; holds and pauses are spans; the archive counts
// where the span reaches it; a batch's timeline shows that batch alone.
func TestSnapshotter_Timeline(t *testing.T) {
	cfg := newSpool(t)
	now := t0
	ago := func(m int) time.Time { return now.Add(-time.Duration(m) * time.Minute) }
	put(t, cfg, taskfile.KindAPI, taskfile.DirDone, taskfile.Task{TaskID: "a1", Model: "writer", Batch: "b", Attempt: 2, StartedAt: ago(50), FinishedAt: ago(40),
		Attempts: []taskfile.AttemptRecord{rec(1, ago(60), 5*time.Minute, "retried", ""), rec(2, ago(50), 10*time.Minute, "success", "")}})
	put(t, cfg, taskfile.KindAPI, taskfile.DirFailed, taskfile.Task{TaskID: "a2", Model: "writer", Batch: "b", Attempt: 1, StartedAt: ago(58), FinishedAt: ago(45),
		Attempts: []taskfile.AttemptRecord{rec(1, ago(58), 13*time.Minute, "failed", "")}})
	put(t, cfg, taskfile.KindAPI, taskfile.DirRunning, taskfile.Task{TaskID: "a3", Model: "writer", Batch: "other", Attempt: 1, StartedAt: ago(5), HeartbeatAt: ago(1), Owner: "here:1",
		Attempts: []taskfile.AttemptRecord{rec(1, ago(5), 0, "", "")}})
	held := rec(1, ago(30), time.Minute, "held", "ops1")
	held.HeldUntil = ago(10)
	put(t, cfg, taskfile.KindWeb, taskfile.DirDone, taskfile.Task{TaskID: "w1", Model: "thinker", Batch: "b", Attempt: 1, StartedAt: ago(8), FinishedAt: ago(3), Account: "ops1",
		Attempts: []taskfile.AttemptRecord{held, rec(1, ago(8), 5*time.Minute, "success", "ops1")}})
	// A file from before attempts were recorded: one bar from startedAt.
	put(t, cfg, taskfile.KindWeb, taskfile.DirDone, taskfile.Task{TaskID: "w-old", Model: "other", Attempt: 1, StartedAt: ago(20), FinishedAt: ago(15), Account: "ops2"})
	// Out of the span: no bar.
	put(t, cfg, taskfile.KindWeb, taskfile.DirDone, taskfile.Task{TaskID: "w-gone", Model: "other", Attempt: 1, StartedAt: ago(300), FinishedAt: ago(290), Account: "ops2",
		Attempts: []taskfile.AttemptRecord{rec(1, ago(300), 10*time.Minute, "success", "ops2")}})
	// In the archive, within the span.
	arch := filepath.Join(spool.NewLayout(cfg.Spool).Archive(taskfile.KindAPI), now.Format("2006-01"), taskfile.DirDone)
	if err := os.MkdirAll(arch, 0o755); err != nil {
		t.Fatal(err)
	}
	old := taskfile.Task{TaskID: "a0", ModelKind: taskfile.KindAPI, Model: "writer", Content: "x", State: taskfile.StateSuccess, Attempt: 1, StartedAt: ago(100), FinishedAt: ago(99),
		Attempts: []taskfile.AttemptRecord{rec(1, ago(100), time.Minute, "success", "")}}
	data, _ := old.Encode()
	if err := os.WriteFile(filepath.Join(arch, "a0.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// A pause on now and one that ended.
	paused := spool.NewLayout(cfg.Spool).Paused(taskfile.KindAPI)
	if err := os.WriteFile(paused, []byte("paused by ops at "+ago(35).Format(time.RFC3339)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := spool.RecordResume(paused, ago(25)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paused, []byte("paused by ops at "+ago(2).Format(time.RFC3339)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	s := NewSnapshotter(spool.NewStore(cfg, nil), nil)
	_, c, err := s.SnapshotTimeline(now, TimelineQuery{Since: 2 * time.Hour, Links: true, Loc: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ task, row, outcome string }
	got := map[key]int{}
	for _, b := range c.Bars {
		got[key{b.Task, b.Row, string(b.Outcome)}]++
	}
	want := map[key]int{
		{"a0", "api/1", "success"}: 1,
		{"a1", "api/1", "retried"}: 1, {"a2", "api/2", "failed"}: 1, {"a1", "api/1", "success"}: 1,
		{"a3", "api/1", "running"}: 1,
		{"w1", "web/ops1", "held"}: 1, {"w1", "web/ops1", "success"}: 1,
		{"w-old", "web/ops2", "success"}: 1,
	}
	if len(got) != len(want) || len(c.Bars) != 8 {
		t.Errorf("bars %v\nwant %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("bar %v: %d, want %d (all: %v)", k, got[k], n, got)
		}
	}
	var rows []string
	for _, r := range c.Rows {
		rows = append(rows, r.Key)
	}
	if strings.Join(rows, " ") != "api/1 api/2 web/ops1 web/ops2" {
		t.Errorf("rows %v", rows)
	}
	var spans []string
	for _, sp := range c.Spans {
		spans = append(spans, string(sp.Kind)+":"+sp.Lane+":"+sp.Row)
	}
	if strings.Join(spans, " ") != "held:web:web/ops1 paused:api: paused:api:" {
		t.Errorf("spans %v", spans)
	}
	var svg bytes.Buffer
	if err := timeline.Render(&svg, c); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(svg.String(), `class="tl-bar"`); n != 8 || !strings.Contains(svg.String(), `href="/task/api/a1"`) {
		t.Errorf("%d bars drawn, want 8, each linking to its task", n)
	}

	_, c, err = s.SnapshotTimeline(now, TimelineQuery{Batch: "b"})
	if err != nil {
		t.Fatal(err)
	}
	// From the batch's first claim to its last end, a fortieth either side.
	margin := ago(3).Sub(ago(60)) / 40
	if len(c.Bars) != 5 || !c.From.Equal(ago(60).Add(-margin)) || !c.To.Equal(ago(3).Add(margin)) {
		t.Errorf("batch b: %d bars from %s to %s, want 5 from %s to %s", len(c.Bars), c.From, c.To, ago(60).Add(-margin), ago(3).Add(margin))
	}
}

func TestSnapshotter_SnapshotTimeline_DefaultWindow(t *testing.T) {
	now := t0
	ago := func(m int) time.Time { return now.Add(-time.Duration(m) * time.Minute) }
	for _, tc := range []struct {
		name  string
		tasks []taskfile.Task
		from  time.Time // before the margin
	}{
		{name: "a batch begun a minute ago fills the window", from: ago(1), tasks: []taskfile.Task{
			{TaskID: "new", Attempts: []taskfile.AttemptRecord{rec(1, ago(1), 30*time.Second, "success", "")}},
			{TaskID: "old", Attempts: []taskfile.AttemptRecord{rec(1, ago(300), time.Minute, "success", "")}}}},
		{name: "an attempt across the 2 h edge starts it at the edge", from: ago(120), tasks: []taskfile.Task{
			{TaskID: "long", Attempts: []taskfile.AttemptRecord{rec(1, ago(150), 40*time.Minute, "success", "")}}}},
		{name: "no attempt in 2 h: the last 2 h", from: ago(120), tasks: []taskfile.Task{
			{TaskID: "old", Attempts: []taskfile.AttemptRecord{rec(1, ago(300), time.Minute, "success", "")}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := newSpool(t)
			for _, tk := range tc.tasks {
				tk.Model, tk.Attempt = "writer", 1
				tk.StartedAt, tk.FinishedAt = tk.Attempts[0].StartedAt, tk.Attempts[0].EndedAt
				put(t, cfg, taskfile.KindAPI, taskfile.DirDone, tk)
			}
			_, c, err := NewSnapshotter(spool.NewStore(cfg, nil), nil).SnapshotTimeline(now, TimelineQuery{})
			if err != nil {
				t.Fatal(err)
			}
			margin := max(now.Sub(tc.from)/40, time.Second)
			if want := tc.from.Add(-margin); !c.From.Equal(want) {
				t.Errorf("window from %s, want %s", c.From, want)
			}
		})
	}
}

// TestSnapshotter_BatchTasks: a timeline asked for a batch brings the
// batch's tasks from the same reading, each with its folder's state and
// its file, in submission order; another batch's are not among them.
func TestSnapshotter_BatchTasks(t *testing.T) {
	cfg := fixture.Spool(t)
	s := NewSnapshotter(spool.NewStore(cfg, nil), nil)
	st, _, err := s.SnapshotTimeline(time.Now(), TimelineQuery{Batch: "b1"})
	if err != nil {
		t.Fatal(err)
	}
	var counts Counts
	for _, b := range st.Batches {
		if b.Batch == "b1" {
			counts = b.Counts
		}
	}
	if counts.Total == 0 || len(st.BatchTasks) != counts.Total {
		t.Fatalf("%d tasks of b1, its counts say %d", len(st.BatchTasks), counts.Total)
	}
	for i, bt := range st.BatchTasks {
		tk, err := spool.ReadTaskFile(bt.Path)
		if err != nil || tk.Batch != "b1" || tk.TaskID != bt.ID || taskfile.FolderState[filepath.Base(filepath.Dir(bt.Path))] != bt.State {
			t.Errorf("%+v: file %v %v", bt, tk, err)
		}
		if i > 0 && bt.SubmittedAt.Before(st.BatchTasks[i-1].SubmittedAt) {
			t.Errorf("%s submitted before %s, listed after it", bt.ID, st.BatchTasks[i-1].ID)
		}
		if bt.FollowUp != tk.FollowUp {
			t.Errorf("%s: followUp %q, its file says %q", bt.ID, bt.FollowUp, tk.FollowUp)
		}
	}
	// A follow-up says which chat it continues.
	put(t, cfg, taskfile.KindAPI, taskfile.DirPending, taskfile.Task{TaskID: "a1-f", Model: "writer", Batch: "b1", FollowUp: "a1"})
	st, _, _ = s.SnapshotTimeline(time.Now(), TimelineQuery{Batch: "b1"})
	if i := slices.IndexFunc(st.BatchTasks, func(b BatchTask) bool { return b.ID == "a1-f" }); i < 0 || st.BatchTasks[i].FollowUp != "a1" {
		t.Errorf("the follow-up's batch task: %+v", st.BatchTasks)
	}
	if st, _, _ := s.SnapshotTimeline(time.Now(), TimelineQuery{}); st.BatchTasks != nil {
		t.Errorf("a timeline without a batch lists %d batch tasks", len(st.BatchTasks))
	}
}

// TestSnapshotter_ChainWaits: a chained task's wait for its parents, from
// its submission to its first claim, is shaded in the row where it ran:
// an API slot, a web account. A task without parents has none.
func TestSnapshotter_ChainWaits(t *testing.T) {
	cfg := newSpool(t)
	rec := func(claimed time.Time, acct string) []taskfile.AttemptRecord {
		return []taskfile.AttemptRecord{{N: 1, ClaimedAt: claimed, StartedAt: claimed, EndedAt: claimed.Add(10 * time.Second), Outcome: "success", Account: acct}}
	}
	put(t, cfg, taskfile.KindAPI, taskfile.DirDone, taskfile.Task{TaskID: "outline", Model: "writer", Batch: "c", Attempt: 1,
		SubmittedAt: t0.Add(-10 * time.Minute), Attempts: rec(t0.Add(-9*time.Minute), "")})
	put(t, cfg, taskfile.KindAPI, taskfile.DirDone, taskfile.Task{TaskID: "summary", Model: "writer", Batch: "c", Attempt: 1, After: []string{"outline"},
		Template: "{{outline.result}}", SubmittedAt: t0.Add(-10 * time.Minute), Attempts: rec(t0.Add(-8*time.Minute), "")})
	put(t, cfg, taskfile.KindWeb, taskfile.DirDone, taskfile.Task{TaskID: "shorter", Model: "thinker", Batch: "c", Attempt: 1, FollowUp: "outline",
		SubmittedAt: t0.Add(-10 * time.Minute), Attempts: rec(t0.Add(-7*time.Minute), "ops2")})
	s := NewSnapshotter(spool.NewStore(cfg, nil), nil)
	_, c, err := s.SnapshotTimeline(t0, TimelineQuery{Batch: "c"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sp := range c.Spans {
		if sp.Kind == timeline.Wait {
			got = append(got, fmt.Sprintf("%s %s %s-%s %s", sp.Lane, sp.Row, sp.Start.Sub(t0), sp.End.Sub(t0), sp.Note))
		}
	}
	want := []string{"api api/1 -10m0s--8m0s summary ← outline", "web web/ops2 -10m0s--7m0s shorter ← outline"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("wait spans %q, want %q", got, want)
	}
}
