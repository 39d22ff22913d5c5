package config

import (
	"strings"
	"testing"
	"time"
)

func mustPace(t *testing.T, p Pace) Pace {
	t.Helper()
	if err := p.check("accounts.a.pace"); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPace_Until(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	at := func(d ...time.Duration) []time.Time {
		out := make([]time.Time, len(d))
		for i, x := range d {
			out[i] = t0.Add(x)
		}
		return out
	}
	s := time.Second
	for _, c := range []struct {
		name  string
		p     Pace
		sends []time.Time
		next  time.Time
		now   time.Time
		until time.Time // zero: may send now
		by    string
	}{
		{"no pace, no sends", Pace{}, nil, time.Time{}, t0, time.Time{}, ""},
		{"inside the gap", Pace{Gap: Duration(2 * s)}, nil, t0.Add(2 * s), t0.Add(s), t0.Add(2 * s), "gap"},
		{"gap over", Pace{Gap: Duration(2 * s)}, nil, t0.Add(2 * s), t0.Add(2 * s), time.Time{}, ""},
		{"3 of 4 per minute", Pace{PerMinute: 4}, at(0, 2*s, 4*s), time.Time{}, t0.Add(5 * s), time.Time{}, ""},
		{"4 of 4 per minute", Pace{PerMinute: 4}, at(0, 2*s, 4*s, 6*s), time.Time{}, t0.Add(7 * s), t0.Add(60 * s), "4 per minute"},
		{"the oldest has left the minute", Pace{PerMinute: 4}, at(0, 2*s, 4*s, 6*s), time.Time{}, t0.Add(60 * s), time.Time{}, ""},
		{"5 in the minute (a cap lowered): two must leave", Pace{PerMinute: 4}, at(0, 2*s, 4*s, 6*s, 8*s), time.Time{}, t0.Add(9 * s), t0.Add(62 * s), "4 per minute"},
		{"hour binds after the gap", Pace{Gap: Duration(s), PerHour: 2}, at(-30*time.Minute, 0), t0.Add(s), t0.Add(s / 2), t0.Add(30 * time.Minute), "2 per hour"},
		{"gap binds after the minute", Pace{Gap: Duration(90 * s), PerMinute: 1}, at(0), t0.Add(90 * s), t0.Add(s), t0.Add(90 * s), "gap"},
		{"day is rolling 24 h", Pace{PerDay: 2}, at(-23*time.Hour, -time.Hour), time.Time{}, t0, t0.Add(time.Hour), "2 per day"},
		{"day: oldest gone", Pace{PerDay: 2}, at(-25*time.Hour, -time.Hour), time.Time{}, t0, time.Time{}, ""},
		{"scaled minute", Pace{PerMinute: 2}.Scaled(0.1), at(0, s), time.Time{}, t0.Add(2 * s), t0.Add(6 * s), "2 per minute"},
		{"scaled minute over", Pace{PerMinute: 2}.Scaled(0.1), at(0, s), time.Time{}, t0.Add(6 * s), time.Time{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustPace(t, c.p)
			if c.p.scale != 0 {
				p.scale = c.p.scale
			}
			until, by := p.Until(c.sends, c.next, c.now)
			if !until.Equal(c.until) || by != c.by {
				t.Errorf("Until = %v %q, want %v %q", until, by, c.until, c.by)
			}
		})
	}
}

func TestPace_NextGapJitter(t *testing.T) {
	p := Pace{Gap: Duration(2 * time.Second), Jitter: Duration(500 * time.Millisecond)}
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		r    float64
		want time.Duration
	}{{0, 2 * time.Second}, {0.5, 2250 * time.Millisecond}, {0.999999, 2499999500 * time.Nanosecond}} {
		if got := p.NextGap(t0, c.r).Sub(t0); got != c.want {
			t.Errorf("r %v: gap %v, want %v", c.r, got, c.want)
		}
	}
	sc := p.Scaled(0.5) // windows only: the gap and its jitter stay
	if sc.Gap.D() != 2*time.Second || sc.Jitter.D() != 500*time.Millisecond || sc.window(time.Minute) != 30*time.Second {
		t.Errorf("scaled: %v %v %v", sc.Gap.D(), sc.Jitter.D(), sc.window(time.Minute))
	}
}

func TestPace_WorkingHours(t *testing.T) {
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		p     Pace
		now   time.Time
		until time.Time
	}{
		{"inside", Pace{Hours: "09:00-18:00", TimeZone: "Asia/Shanghai"}, time.Date(2026, 3, 2, 10, 0, 0, 0, sh), time.Time{}},
		{"before the start: today", Pace{Hours: "09:00-18:00", TimeZone: "Asia/Shanghai"}, time.Date(2026, 3, 2, 7, 30, 0, 0, sh), time.Date(2026, 3, 2, 9, 0, 0, 0, sh)},
		{"at the end: tomorrow", Pace{Hours: "09:00-18:00", TimeZone: "Asia/Shanghai"}, time.Date(2026, 3, 2, 18, 0, 0, 0, sh), time.Date(2026, 3, 3, 9, 0, 0, 0, sh)},
		{"other zone's clock", Pace{Hours: "09:00-18:00", TimeZone: "Asia/Shanghai"}, time.Date(2026, 3, 2, 2, 0, 0, 0, time.UTC), time.Time{}}, // 10:00 in Shanghai
		{"other zone's clock, closed", Pace{Hours: "09:00-18:00", TimeZone: "Asia/Shanghai"}, time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC), time.Date(2026, 3, 3, 1, 0, 0, 0, time.UTC)},
		{"across midnight, late", Pace{Hours: "22:00-06:00", TimeZone: "America/New_York"}, time.Date(2026, 3, 2, 23, 0, 0, 0, ny), time.Time{}},
		{"across midnight, early", Pace{Hours: "22:00-06:00", TimeZone: "America/New_York"}, time.Date(2026, 3, 3, 5, 59, 0, 0, ny), time.Time{}},
		{"across midnight, closed", Pace{Hours: "22:00-06:00", TimeZone: "America/New_York"}, time.Date(2026, 3, 3, 6, 0, 0, 0, ny), time.Date(2026, 3, 3, 22, 0, 0, 0, ny)},
		{"across month end", Pace{Hours: "09:00-18:00", TimeZone: "Asia/Shanghai"}, time.Date(2026, 3, 31, 19, 0, 0, 0, sh), time.Date(2026, 4, 1, 9, 0, 0, 0, sh)},
		{"DST spring forward (New York, 8 March 2026)", Pace{Hours: "09:00-17:00", TimeZone: "America/New_York"}, time.Date(2026, 3, 7, 18, 0, 0, 0, ny), time.Date(2026, 3, 8, 9, 0, 0, 0, ny)},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mustPace(t, c.p)
			until, by := p.Until(nil, time.Time{}, c.now)
			if !until.Equal(c.until) {
				t.Errorf("Until = %v, want %v", until, c.until)
			}
			if !until.IsZero() && !strings.HasPrefix(by, "working hours "+c.p.Hours) {
				t.Errorf("by %q", by)
			}
		})
	}
	// A window that ends outside the hours waits for the next opening.
	p := mustPace(t, Pace{PerHour: 1, Hours: "09:00-18:00", TimeZone: "Asia/Shanghai"})
	sent := time.Date(2026, 3, 2, 17, 30, 0, 0, sh)
	if until, by := p.Until([]time.Time{sent}, time.Time{}, sent.Add(time.Minute)); !until.Equal(time.Date(2026, 3, 3, 9, 0, 0, 0, sh)) || !strings.HasPrefix(by, "working hours") {
		t.Errorf("window past closing: %v %q", until, by)
	}
}

func TestPace_Check(t *testing.T) {
	for _, c := range []struct {
		p   Pace
		key string
	}{
		{Pace{PerHour: -1}, "perHour"},
		{Pace{Hours: "9-18"}, "hours"},
		{Pace{Hours: "09:00-09:00"}, "hours"},
		{Pace{Hours: "09:00-25:00"}, "hours"},
		{Pace{Hours: "09:00-18:00", TimeZone: "Mars/Olympus"}, "timeZone"},
		{Pace{TimeZone: "Asia/Shanghai"}, "timeZone"},
	} {
		err := c.p.check("accounts.a.pace")
		if err == nil || err.Key != "accounts.a.pace."+c.key {
			t.Errorf("%+v: %v, want an error at %s", c.p, err, c.key)
		}
	}
	cfg, err := ParseConfig([]byte("spool: s\naccounts:\n  a: {site: x, pace: {gap: 2s, jitter: 500ms, perMinute: 4, hours: '22:00-06:00', timeZone: Asia/Shanghai}}\nsites:\n  x: {url: 'http://127.0.0.1/', input: i, send: s, answer: a, pace: {perDay: 40}}\nmodels:\n  - {name: w, kind: web, site: x}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.PaceOf("a", "x"); p == nil || p.PerMinute != 4 || p.Gap.D() != 2*time.Second || p.from != 22*60 {
		t.Errorf("account pace %+v", p)
	}
	if p := cfg.PaceOf("b", "x"); p == nil || p.PerDay != 40 {
		t.Errorf("site pace %+v", p)
	}
	if _, err := ParseConfig([]byte("spool: s\naccounts:\n  a: {pace: {perHuor: 4}}\n")); err == nil || !strings.Contains(err.Error(), "perHuor") {
		t.Errorf("unknown key: %v", err)
	}
}
