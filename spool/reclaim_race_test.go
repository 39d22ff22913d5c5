package spool

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The reclaim race: a task whose runner in this process finishes while
// Reclaim looks at it is never taken back to pending. Each case plays
// what the runner does between Reclaim's first look and its move.
func TestStore_ReclaimRace(t *testing.T) {
	for _, c := range []struct {
		name    string
		between func(t *testing.T, s *Store, tk *taskfile.Task) // after the read
		heldNow bool                                            // the second held() answer
		want    string                                          // the folder the task ends in
	}{
		{name: "final record written", want: taskfile.DirDone, between: func(t *testing.T, s *Store, tk *taskfile.Task) {
			tk.State, tk.Result, tk.FinishedAt = taskfile.StateSuccess, "ok", time.Now().UTC()
			if err := putTask(s, taskfile.KindAPI, taskfile.DirRunning, tk); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "held again", heldNow: true, want: taskfile.DirRunning},
		{name: "heartbeat since", want: taskfile.DirRunning, between: func(t *testing.T, s *Store, tk *taskfile.Task) {
			tk.HeartbeatAt = time.Now().UTC()
			if err := putTask(s, taskfile.KindAPI, taskfile.DirRunning, tk); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "nothing happens", want: taskfile.DirPending},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newTestStore(t)
			s.Cfg.Host = "here"
			now := time.Now().UTC()
			owner := fmt.Sprintf("here:%d", os.Getpid()) // this process, whose runner does not hold it
			tk := &taskfile.Task{TaskID: "x", ModelKind: taskfile.KindAPI, Model: "fast", Content: "x", State: taskfile.StateRunning,
				Attempt: 1, SubmittedAt: now, StartedAt: now, HeartbeatAt: now.Add(-time.Second), Owner: owner}
			if err := putTask(s, taskfile.KindAPI, taskfile.DirRunning, tk); err != nil {
				t.Fatal(err)
			}
			calls := 0
			held := func(string) bool {
				calls++
				if calls == 2 {
					if c.between != nil {
						c.between(t, s, tk.Clone())
					}
					return c.heldNow
				}
				return false
			}
			if _, err := s.Reclaim(taskfile.KindAPI, now, held); err != nil {
				t.Fatal(err)
			}
			if calls < 2 {
				t.Fatalf("held asked %d times, want a second look before the move", calls)
			}
			if got := s.Layout.Locate(taskfile.KindAPI, "x"); got != c.want {
				t.Fatalf("task in %s/, want %s/", got, c.want)
			}
		})
	}
}
