package config

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"15s", 15 * time.Second, true},
		{"2m", 2 * time.Minute, true},
		{"30d", 30 * day, true},
		{"0d", 0, true},
		{"1.5d", 36 * time.Hour, true},
		{"1d12h", 36 * time.Hour, true},
		{"1d12h30m", 36*time.Hour + 30*time.Minute, true},
		{" 7d ", 7 * day, true},
		{"36500d", 36500 * day, true},
		{"36501d", 0, false},
		{"d", 0, false},
		{"-1d", 0, false},
		{"-5s", 0, false},
		{"1d-5s", 0, false},
		{"1dd", 0, false},
		{"1d2d", 0, false},
		{"1e3d", 0, false},
		{"0x10d", 0, false},
		{"30days", 0, false},
		{"soon", 0, false},
		{"", 0, false},
		{"1w", 0, false},
	} {
		got, err := ParseDuration(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// FuzzParseDuration holds the parser to its contract: it never panics,
// never returns a negative duration, and agrees with time.ParseDuration on
// every input without a 'd'.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30d", "1.5d", "1d12h", "15s", "-1d", "d", "1e308d", "9223372036854775807d", "1d-1h", ".5d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v: negative", s, d)
		}
		if want, werr := time.ParseDuration(s); werr == nil && want >= 0 && want != d {
			t.Fatalf("ParseDuration(%q) = %v, time.ParseDuration says %v", s, d, want)
		}
	})
}
