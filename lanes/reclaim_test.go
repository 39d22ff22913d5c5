package lanes

import (
	"testing"
	"time"
)

func TestEnded_Note(t *testing.T) {
	t0 := time.Now()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	const keep = 90 * time.Second
	type note struct {
		id string
		s  int
	}
	for _, tc := range []struct {
		name   string
		notes  []note
		now    int
		within map[string]bool
		kept   int // entries in the map after the last note
	}{
		{name: "fresh", notes: []note{{"a", 0}, {"b", 10}}, now: 20, within: map[string]bool{"a": true, "b": true, "c": false}, kept: 2},
		{name: "old forgotten at the next note", notes: []note{{"a", 0}, {"b", 95}}, now: 95, within: map[string]bool{"a": false, "b": true}, kept: 1},
		{name: "exactly keep is old", notes: []note{{"a", 0}, {"b", 90}}, now: 90, within: map[string]bool{"a": false, "b": true}, kept: 1},
		{name: "noted again lives on", notes: []note{{"a", 0}, {"a", 80}, {"b", 100}}, now: 100, within: map[string]bool{"a": true, "b": true}, kept: 2},
		{name: "noted again, both old", notes: []note{{"a", 0}, {"a", 5}, {"b", 200}}, now: 200, within: map[string]bool{"a": false, "b": true}, kept: 1},
		{name: "old but not yet forgotten is not within", notes: []note{{"a", 0}}, now: 91, within: map[string]bool{"a": false}, kept: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e ended
			for _, n := range tc.notes {
				e.note(n.id, at(n.s), keep)
			}
			for id, want := range tc.within {
				if got := e.within(id, at(tc.now), keep); got != want {
					t.Errorf("within(%s) at %ds = %v, want %v", id, tc.now, got, want)
				}
			}
			if len(e.at) != tc.kept {
				t.Errorf("kept %d ids, want %d: %v", len(e.at), tc.kept, e.at)
			}
			if len(e.order) < len(e.at) {
				t.Errorf("queue of %d shorter than the map of %d", len(e.order), len(e.at))
			}
		})
	}
}

// A long run of ends keeps only what is within keep: the queue does not
// grow with every task the lane ever ran.
func TestEnded_NoteForgets(t *testing.T) {
	var e ended
	t0 := time.Now()
	for i := range 10000 {
		e.note("t", t0.Add(time.Duration(i)*time.Second), 90*time.Second)
	}
	if len(e.at) != 1 || len(e.order) > 91 {
		t.Errorf("after 10,000 ends 1 s apart: %d ids, queue %d; want 1 and at most 91", len(e.at), len(e.order))
	}
}
