package spool

import (
	"testing"
	"time"
)

// TestLinkSightings_Lasted: a drop counts as hard-linked for good only when
// every look finds it so; a sighting from before a gap starts anew (an
// earlier file of that name, moved on by another daemon).
func TestLinkSightings_Lasted(t *testing.T) {
	const d, gap = 2 * time.Second, 12 * time.Second
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		at   []time.Duration // sightings after t0
		want bool            // at the last one
	}{
		{"first sighting", []time.Duration{0}, false},
		{"seen again within settle", []time.Duration{0, time.Second}, false},
		{"seen again past settle", []time.Duration{0, 5 * time.Second}, true},
		{"seen through rescans past settle", []time.Duration{0, 5 * time.Second, 10 * time.Second}, true},
		{"an old sighting after a gap", []time.Duration{0, time.Hour}, false},
		{"after a gap, again past settle", []time.Duration{0, time.Hour, time.Hour + 5*time.Second}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l linkSightings
			var got bool
			for _, a := range tc.at {
				got = l.lasted("x", t0.Add(a), d, gap)
			}
			if got != tc.want {
				t.Errorf("lasted = %v, want %v", got, tc.want)
			}
		})
	}
	var l linkSightings
	l.lasted("x", t0, d, gap)
	l.drop("x")
	if l.lasted("x", t0.Add(5*time.Second), d, gap) {
		t.Error("a dropped sighting still counted")
	}
}
