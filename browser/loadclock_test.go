package browser

import (
	"testing"
	"time"
)

// TestLoadClock_GraceAndDeadline: the grace counts from the first ready
// report only and is over once more than InputGrace has passed; the
// deadline is PageLoad after the start and passes once now is after it.
func TestLoadClock_GraceAndDeadline(t *testing.T) {
	start := time.Date(2026, 3, 5, 14, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	tm := Timings{PageLoad: 60 * time.Second, InputGrace: 15 * time.Second}
	for _, c := range []struct {
		name      string
		ready     []time.Duration // when the page reported ready, in order
		now       time.Duration
		graceOver bool
		expired   bool
	}{
		{"at the start", nil, 0, false, false},
		{"never ready, long before the deadline", nil, 30 * time.Second, false, false},
		{"never ready, at the deadline", nil, 60 * time.Second, false, false},
		{"never ready, just past the deadline", nil, 60*time.Second + time.Nanosecond, false, true},
		{"ready, within the grace", []time.Duration{5 * time.Second}, 10 * time.Second, false, false},
		{"ready, exactly the grace later", []time.Duration{5 * time.Second}, 20 * time.Second, false, false},
		{"ready, just over the grace", []time.Duration{5 * time.Second}, 20*time.Second + time.Nanosecond, true, false},
		{"a later ready report does not restart the grace", []time.Duration{5 * time.Second, 18 * time.Second}, 21 * time.Second, true, false},
		{"ready late: the deadline passes before the grace ends", []time.Duration{55 * time.Second}, 61 * time.Second, false, true},
		{"ready early: both over", []time.Duration{0}, 70 * time.Second, true, true},
	} {
		clock := newLoadClock(tm, start)
		for _, r := range c.ready {
			clock.ready(at(r))
		}
		if got := clock.graceOver(at(c.now)); got != c.graceOver {
			t.Errorf("%s: graceOver(+%s) = %v, want %v", c.name, c.now, got, c.graceOver)
		}
		if got := clock.expired(at(c.now)); got != c.expired {
			t.Errorf("%s: expired(+%s) = %v, want %v", c.name, c.now, got, c.expired)
		}
	}
}
