package status

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/status/timeline"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// BenchmarkSnapshotter_Timeline is the status page's timeline over 20,000
// finished tasks of a day, from a warm cache: the snapshot alone, and the
// snapshot with its timeline drawn.
func BenchmarkSnapshotter_Timeline(b *testing.B) {
	cfg := newSpool(b)
	now := t0
	for i := range 20000 {
		// Two thirds API, a third web on two sessions; one in ten retried once.
		k, model, acct := taskfile.KindAPI, "writer", ""
		if i%3 == 2 {
			k, model, acct = taskfile.KindWeb, []string{"thinker", "other"}[i/3%2], []string{"ops1", "ops2"}[i/3%2]
		}
		claimed := now.Add(-24*time.Hour + time.Duration(i)*4320*time.Millisecond)
		took := 8*time.Second + time.Duration(i%13)*time.Second
		tk := taskfile.Task{TaskID: fmt.Sprintf("t%05d", i), Model: model, Batch: fmt.Sprintf("b%03d", i/400), Account: acct}
		if i%10 == 0 {
			tk.Attempts = append(tk.Attempts, taskfile.AttemptRecord{N: 1, ClaimedAt: claimed, StartedAt: claimed, EndedAt: claimed.Add(took / 2), Outcome: "retried", ErrorClass: "transient", Account: acct})
			claimed = claimed.Add(took/2 + time.Second)
		}
		tk.Attempt = len(tk.Attempts) + 1
		tk.Attempts = append(tk.Attempts, taskfile.AttemptRecord{N: tk.Attempt, ClaimedAt: claimed, StartedAt: claimed, EndedAt: claimed.Add(took), Outcome: "success", Account: acct})
		tk.StartedAt, tk.FinishedAt = claimed, claimed.Add(took)
		put(b, cfg, k, taskfile.DirDone, tk)
	}
	s := NewSnapshotter(spool.NewStore(cfg, nil), nil)
	if _, _, err := s.SnapshotTimeline(now, TimelineQuery{Since: 24 * time.Hour}); err != nil {
		b.Fatal(err)
	}
	b.Run("snapshot", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Snapshot(now); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("with-timeline", func(b *testing.B) {
		for b.Loop() {
			_, c, err := s.SnapshotTimeline(now, TimelineQuery{Since: 24 * time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			if err := timeline.Render(io.Discard, c); err != nil {
				b.Fatal(err)
			}
		}
	})
}
