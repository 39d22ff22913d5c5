package status

import (
	"os"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestSnapshotter_KeptListing: a folder whose mtime has not moved is not
// listed again, unless its listing was racy or is old; a planted file that
// leaves the mtime where it was shows only then, which is how the test
// tells a reused listing from a new one.
func TestSnapshotter_KeptListing(t *testing.T) {
	wall := time.Now()
	for _, tc := range []struct {
		name    string
		mtime   time.Time // done/'s mtime, before and after the plant
		later   time.Duration
		relists bool
	}{
		{"unchanged folder: listing reused", wall.Add(-time.Hour), time.Second, false},
		{"racy listing: listed again", wall.Add(-time.Second), time.Second, true},
		{"old listing: listed again", wall.Add(-time.Hour), listingMaxAge + time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := newSpool(t)
			done := spool.NewLayout(cfg.Spool).Lane(taskfile.KindAPI, taskfile.DirDone)
			put(t, cfg, taskfile.KindAPI, taskfile.DirDone, taskfile.Task{TaskID: "a", Model: "writer"})
			if err := os.Chtimes(done, tc.mtime, tc.mtime); err != nil {
				t.Fatal(err)
			}
			s := NewSnapshotter(spool.NewStore(cfg, nil), nil)
			s.wall = func() time.Time { return wall }
			if st, err := s.Snapshot(t0); err != nil || st.Lanes[1].Counts.Success != 1 {
				t.Fatalf("first: %v %+v", err, st)
			}
			put(t, cfg, taskfile.KindAPI, taskfile.DirDone, taskfile.Task{TaskID: "b", Model: "writer"})
			if err := os.Chtimes(done, tc.mtime, tc.mtime); err != nil {
				t.Fatal(err)
			}
			s.wall = func() time.Time { return wall.Add(tc.later) }
			st, err := s.Snapshot(t0)
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			if tc.relists {
				want = 2
			}
			if got := st.Lanes[1].Counts.Success; got != want {
				t.Errorf("done tasks = %d, want %d", got, want)
			}
			// A change that moves the mtime is always seen.
			if err := os.Chtimes(done, tc.mtime.Add(time.Minute), tc.mtime.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			if st, _ := s.Snapshot(t0); st.Lanes[1].Counts.Success != 2 {
				t.Errorf("after the mtime moved: %d done", st.Lanes[1].Counts.Success)
			}
		})
	}
}

// TestNewest_Add: newest keeps the latest n by finish, whatever the order
// they come in.
func TestNewest_Add(t *testing.T) {
	for _, order := range [][]int{{1, 2, 3, 4, 5, 6}, {6, 5, 4, 3, 2, 1}, {3, 6, 1, 5, 2, 4}} {
		w := &newest{n: 3}
		for _, i := range order {
			w.add(&summary{id: string(rune('0' + i)), finishedAt: t0.Add(time.Duration(i) * time.Minute)})
		}
		got := ""
		for _, s := range w.list() {
			got += s.id
		}
		if got != "654" {
			t.Errorf("order %v: kept %q, want 654", order, got)
		}
	}
}
