package taskfile

import (
	"testing"
	"time"
)

func TestPriority(t *testing.T) {
	for _, tc := range []struct {
		p     Priority
		valid bool
		level int
		name  string
	}{
		{"", true, 0, "normal"}, {"normal", true, 0, "normal"}, {"high", true, 1, "high"}, {"low", true, -1, "low"},
		{"High", false, 0, "High"}, {"urgent", false, 0, "urgent"},
	} {
		if tc.p.Valid() != tc.valid || tc.p.Level() != tc.level || tc.p.String() != tc.name {
			t.Errorf("%q: valid %v level %d name %s", tc.p, tc.p.Valid(), tc.p.Level(), tc.p)
		}
	}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		base   int
		waited time.Duration
		aging  time.Duration
		want   int
	}{
		{LevelLow, 59 * time.Minute, time.Hour, LevelLow}, {LevelLow, time.Hour, time.Hour, LevelNormal},
		{LevelLow, 2 * time.Hour, time.Hour, LevelHigh}, {LevelLow, 9 * time.Hour, time.Hour, LevelHigh},
		{LevelNormal, 61 * time.Minute, time.Hour, LevelHigh}, {LevelHigh, 0, time.Hour, LevelHigh},
		{LevelLow, 9 * time.Hour, 0, LevelLow}, {LevelLow, -time.Hour, time.Hour, LevelLow},
	} {
		if got := AgedLevel(tc.base, now.Add(-tc.waited), now, tc.aging); got != tc.want {
			t.Errorf("aged(%d, waited %s, aging %s) = %d, want %d", tc.base, tc.waited, tc.aging, got, tc.want)
		}
	}
}
