package lanes

import (
	"fmt"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestIndex_NextPriority(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	hour := time.Hour
	ent := func(id string, p taskfile.Priority, waited time.Duration, notBefore time.Duration) Entry {
		e := Entry{ID: id, Priority: p.Level(), SubmittedAt: now.Add(-waited), AgingAfter: hour}
		if notBefore != 0 {
			e.NotBefore = now.Add(notBefore)
		}
		return e
	}
	fifty := func(p taskfile.Priority) []Entry {
		var out []Entry
		for i := range 50 {
			out = append(out, ent(fmt.Sprintf("n%02d", i), p, 30*time.Minute-time.Duration(i)*time.Second, 0))
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		entries  []Entry
		n        int
		eligible func(Entry) bool
		want     string
		wake     time.Duration
	}{
		{"a high task dropped behind 50 normal starts next", append(fifty(taskfile.PriorityNormal), ent("urgent", taskfile.PriorityHigh, 0, 0)), 2, nil, "[urgent n00]", 0},
		{"low waits behind normal", []Entry{ent("low", taskfile.PriorityLow, 10*time.Minute, 0), ent("norm", taskfile.PriorityNormal, 0, 0)}, 2, nil, "[norm low]", 0},
		{"order within a priority is unchanged", []Entry{ent("b", taskfile.PriorityNormal, time.Minute, 0), ent("a", taskfile.PriorityNormal, time.Minute, 0),
			ent("c", taskfile.PriorityNormal, 2*time.Minute, 0), ent("d", taskfile.PriorityNormal, 3*time.Minute, -time.Second)}, 4, nil, "[c a b d]", 0},
		{"a low task that waited agingAfter counts as normal, and is older", []Entry{ent("norm", taskfile.PriorityNormal, 0, 0), ent("low", taskfile.PriorityLow, 61*time.Minute, 0)}, 2, nil, "[low norm]", 0},
		{"two agingAfter make a low task high", append(fifty(taskfile.PriorityHigh), ent("low", taskfile.PriorityLow, 121*time.Minute, 0)), 1, nil, "[low]", 0},
		{"one agingAfter is not enough against high", append(fifty(taskfile.PriorityHigh), ent("low", taskfile.PriorityLow, 61*time.Minute, 0)), 1, nil, "[n00]", 0},
		{"a retried task ages too", []Entry{ent("fresh", taskfile.PriorityNormal, 0, 0), ent("retried", taskfile.PriorityLow, 130*time.Minute, -time.Second)}, 2, nil, "[retried fresh]", 0},
		{"aged to the same level, a retry still comes after fresh tasks", []Entry{ent("fresh", taskfile.PriorityNormal, 0, 0), ent("retried", taskfile.PriorityLow, 70*time.Minute, -time.Second)}, 2, nil, "[fresh retried]", 0},
		{"a retry not yet due waits, and says when", []Entry{ent("later", taskfile.PriorityHigh, 3*time.Hour, 5*time.Second), ent("now", taskfile.PriorityLow, 0, 0)}, 2, nil, "[now]", 5 * time.Second},
		{"not eligible: skipped, the next one taken", []Entry{ent("held", taskfile.PriorityHigh, 0, 0), ent("free", taskfile.PriorityLow, 0, 0)}, 2,
			func(e Entry) bool { return e.ID != "held" }, "[free]", 0},
		{"nothing", nil, 1, nil, "[]", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := NewIndex(tc.entries)
			got, wake := ix.Next(now, tc.n, tc.eligible)
			var ids []string
			for _, e := range got {
				ids = append(ids, e.ID)
			}
			if s := fmt.Sprint(ids); s != tc.want && !(tc.want == "[]" && len(ids) == 0) {
				t.Errorf("Next = %s, want %s", s, tc.want)
			}
			var w time.Duration
			if !wake.IsZero() {
				w = wake.Sub(now)
			}
			if w != tc.wake {
				t.Errorf("wake in %s, want %s", w, tc.wake)
			}
			if ix.Len() != len(tc.entries) {
				t.Errorf("Len %d after Next, want %d: Next must not remove", ix.Len(), len(tc.entries))
			}
		})
	}
}

// TestIndex_PutRemove: changing an entry's priority moves it; Remove
// takes it out of whichever list holds it.
func TestIndex_PutRemove(t *testing.T) {
	now := time.Now()
	ix := NewIndex(nil)
	for i := range 5 {
		ix.Put(Entry{ID: fmt.Sprint("t", i), Priority: taskfile.LevelNormal, SubmittedAt: now.Add(time.Duration(i) * time.Second), AgingAfter: time.Hour})
	}
	ix.Put(Entry{ID: "t3", Priority: taskfile.LevelHigh, SubmittedAt: now.Add(3 * time.Second), AgingAfter: time.Hour})
	ix.Put(Entry{ID: "t0", Priority: taskfile.LevelLow, SubmittedAt: now, AgingAfter: time.Hour})
	ix.Put(Entry{ID: "t1", Priority: taskfile.LevelNormal, SubmittedAt: now.Add(time.Second), NotBefore: now.Add(-time.Second), AgingAfter: time.Hour})
	if ix.Len() != 5 || !ix.Has("t3") {
		t.Fatalf("len %d", ix.Len())
	}
	got, _ := ix.Next(now.Add(10*time.Second), 5, nil)
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	if fmt.Sprint(ids) != "[t3 t2 t4 t1 t0]" {
		t.Errorf("order %v", ids)
	}
	for _, id := range []string{"t0", "t1", "t3", "nosuch"} {
		ix.Remove(id)
	}
	if s := ix.Snapshot(); len(s) != 2 || s[0].ID != "t2" || s[1].ID != "t4" || ix.Has("t3") {
		t.Errorf("after removes: %+v", s)
	}
}

// TestIndex_NoStarvation: a steady stream of high tasks, each taken as
// soon as it arrives, never keeps a low task waiting past two agingAfter.
func TestIndex_NoStarvation(t *testing.T) {
	start := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	aging := time.Hour
	ix := NewIndex([]Entry{{ID: "low", Priority: taskfile.LevelLow, SubmittedAt: start, AgingAfter: aging}})
	for i := 0; ; i++ {
		now := start.Add(time.Duration(i) * time.Minute)
		// Two new high tasks a minute, one taken a minute: the queue of
		// high tasks only grows.
		for j := range 2 {
			ix.Put(Entry{ID: fmt.Sprintf("h%d-%d", i, j), Priority: taskfile.LevelHigh, SubmittedAt: now, AgingAfter: aging})
		}
		got, _ := ix.Next(now, 1, nil)
		ix.Remove(got[0].ID)
		if got[0].ID == "low" {
			if waited := now.Sub(start); waited > 2*aging+time.Minute {
				t.Errorf("low taken after %s, want within two agingAfter", waited)
			}
			return
		}
		if i > 500 {
			t.Fatal("low never taken: starved")
		}
	}
}

func TestIndex_Next(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	ix := NewIndex([]Entry{
		{ID: "late", SubmittedAt: now.Add(-5e9), NotBefore: now.Add(5e9)},
		{ID: "b", SubmittedAt: now.Add(-2e9)},
		{ID: "a", SubmittedAt: now.Add(-3e9)},
		{ID: "off", SubmittedAt: now.Add(-9e9), Account: "x"},
	})
	got, wake := ix.Next(now, 10, func(e Entry) bool { return e.Account != "x" })
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" {
		t.Fatalf("order: %+v", got)
	}
	if !wake.Equal(now.Add(5e9)) {
		t.Errorf("wake %v", wake)
	}
	ix.Remove("a")
	ix.Put(Entry{ID: "b", SubmittedAt: now.Add(-1e10)})
	if got, _ := ix.Next(now, 1, nil); got[0].ID != "b" || ix.Len() != 3 {
		t.Fatalf("after put/remove: %+v len %d", got, ix.Len())
	}
}

// TestIndex_NewIndexDuplicates: of several entries of one id (one task
// found in two folders after a crash), the last one wins, in every list
// and in the output claims; entries of distinct ids are all kept.
func TestIndex_NewIndexDuplicates(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		entries  []Entry
		want     string // Next's ids, all taken
		outOwner string // owner of output key "o"
	}{
		{"no duplicates, one list", []Entry{{ID: "b", SubmittedAt: now.Add(-time.Minute)}, {ID: "a", SubmittedAt: now.Add(-2 * time.Minute)}}, "[a b]", ""},
		{"no duplicates, several lists", []Entry{{ID: "n", SubmittedAt: now}, {ID: "h", Priority: taskfile.LevelHigh, SubmittedAt: now},
			{ID: "r", SubmittedAt: now.Add(-time.Hour), NotBefore: now.Add(-time.Second)}}, "[h n r]", ""},
		{"the last of one id wins", []Entry{{ID: "a", Priority: taskfile.LevelLow, SubmittedAt: now, Output: "o"}, {ID: "b", SubmittedAt: now},
			{ID: "a", Priority: taskfile.LevelHigh, SubmittedAt: now}}, "[a b]", ""},
		{"the last one's output counts", []Entry{{ID: "a", SubmittedAt: now}, {ID: "a", SubmittedAt: now, Output: "o"}}, "[a]", "a"},
		{"only duplicates", []Entry{{ID: "a", SubmittedAt: now}, {ID: "a", SubmittedAt: now}, {ID: "a", SubmittedAt: now}}, "[a]", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := NewIndex(tc.entries)
			got, _ := ix.Next(now, 10, nil)
			var ids []string
			for _, e := range got {
				ids = append(ids, e.ID)
			}
			if s := fmt.Sprint(ids); s != tc.want {
				t.Errorf("Next = %s, want %s", s, tc.want)
			}
			if n := len(ids); ix.Len() != n {
				t.Errorf("Len = %d, want %d", ix.Len(), n)
			}
			if owner, _ := ix.OutputOwner("o"); owner != tc.outOwner {
				t.Errorf("OutputOwner(o) = %q, want %q", owner, tc.outOwner)
			}
		})
	}
}
