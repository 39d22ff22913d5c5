package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // working hours name IANA zones; Windows has no zoneinfo of its own
)

// Pace is how often one account may send (accounts.NAME.pace, or a
// site's default, sites.NAME.pace): sites mute or ban accounts driven too
// often, whatever the overlap. A task that the pace keeps waiting stays
// pending, spends nothing, and shows why and until when.
type Pace struct {
	// Gap is the least time from one send to the next; Jitter adds a
	// random extra of up to itself to each gap, drawn once per send.
	Gap    Duration `yaml:"gap"`
	Jitter Duration `yaml:"jitter"`
	// PerMinute, PerHour and PerDay cap the sends in any rolling minute,
	// hour and 24 hours (0: no cap).
	PerMinute int `yaml:"perMinute"`
	PerHour   int `yaml:"perHour"`
	PerDay    int `yaml:"perDay"`
	// Hours are the working hours, "09:00-18:00" (a start after the end
	// crosses midnight: "22:00-06:00"), in TimeZone (an IANA name such as
	// Asia/Shanghai; default the host's). Empty: any hour.
	Hours    string `yaml:"hours"`
	TimeZone string `yaml:"timeZone"`

	scale    float64 // windows × scale (Scaled); 0 means 1
	loc      *time.Location
	from, to int // working hours, minutes of the day; from == to: any hour
}

// PaceOf returns the pace of account (its own, else its site's), nil
// when it has none.
func (c *Config) PaceOf(account, site string) *Pace {
	if a, ok := c.Accounts[account]; ok && a.Pace != nil {
		return a.Pace
	}
	if s, ok := c.Sites[site]; ok && s.Pace != nil {
		return s.Pace
	}
	return nil
}

// check validates the pace at key and resolves its working hours.
func (p *Pace) check(key string) *ConfigError {
	for _, f := range []struct {
		k string
		v int
	}{{"perMinute", p.PerMinute}, {"perHour", p.PerHour}, {"perDay", p.PerDay}} {
		if f.v < 0 {
			return &ConfigError{Key: key + "." + f.k, Msg: fmt.Sprintf("%d: want 0 (no cap) or more", f.v)}
		}
	}
	p.loc = time.Local
	if p.TimeZone != "" {
		loc, err := time.LoadLocation(p.TimeZone)
		if err != nil || p.TimeZone == "Local" {
			return &ConfigError{Key: key + ".timeZone", Msg: fmt.Sprintf("%q is not a time zone (an IANA name such as Asia/Shanghai)", p.TimeZone)}
		}
		p.loc = loc
	}
	if p.Hours == "" {
		if p.TimeZone != "" {
			return &ConfigError{Key: key + ".timeZone", Msg: "a time zone needs hours (such as 09:00-18:00)"}
		}
		return nil
	}
	a, b, ok := strings.Cut(p.Hours, "-")
	from, ok1 := clockMinutes(a)
	to, ok2 := clockMinutes(b)
	if !ok || !ok1 || !ok2 || from == to {
		return &ConfigError{Key: key + ".hours", Msg: fmt.Sprintf("%q: want HH:MM-HH:MM, two different times (22:00-06:00 crosses midnight)", p.Hours)}
	}
	p.from, p.to = from, to
	return nil
}

// clockMinutes reads "9:05" or "09:05" (24:00 is the end of the day).
func clockMinutes(s string) (int, bool) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(m) != 2 || hh < 0 || mm < 0 || mm > 59 || hh > 24 || (hh == 24 && mm != 0) {
		return 0, false
	}
	return (hh*60 + mm) % (24 * 60), true
}

// Scaled is the pace with its minute, hour and day windows multiplied by
// f (a test's time scale, SPOOLGATE_PACE_WINDOW_SCALE: a test cannot wait
// out a minute); the gap, the jitter and the working hours stay as given.
func (p Pace) Scaled(f float64) Pace {
	if f <= 0 || f == 1 {
		return p
	}
	p.scale = f
	return p
}

func (p Pace) window(d time.Duration) time.Duration {
	if p.scale > 0 {
		return time.Duration(float64(d) * p.scale)
	}
	return d
}

// NextGap is when the send at sent lets the next one start: the gap and
// r (in [0,1)) of the jitter after it.
func (p Pace) NextGap(sent time.Time, r float64) time.Time {
	return sent.Add(p.Gap.D() + time.Duration(r*float64(p.Jitter)))
}

// Keep is how long a send counts: the longest window in use (a gap alone
// needs no list of sends).
func (p Pace) Keep() time.Duration {
	switch {
	case p.PerDay > 0:
		return p.window(24 * time.Hour)
	case p.PerHour > 0:
		return p.window(time.Hour)
	case p.PerMinute > 0:
		return p.window(time.Minute)
	}
	return 0
}

// Until says when the next send may start, given the sends that still
// count and next (the last send's gap end, NextGap): the zero time when
// it may now, else the time and the rule that binds ("gap", "4 per
// minute", "working hours 09:00-18:00 Asia/Shanghai").
func (p Pace) Until(sends []time.Time, next, now time.Time) (time.Time, string) {
	until, by := time.Time{}, ""
	if now.Before(next) {
		until, by = next, "gap"
	}
	s := append([]time.Time(nil), sends...)
	sort.Slice(s, func(i, j int) bool { return s[i].Before(s[j]) })
	for _, w := range []struct {
		n    int
		d    time.Duration
		name string
	}{{p.PerMinute, time.Minute, "minute"}, {p.PerHour, time.Hour, "hour"}, {p.PerDay, 24 * time.Hour, "day"}} {
		if w.n <= 0 {
			continue
		}
		d := p.window(w.d)
		in := s[sort.Search(len(s), func(i int) bool { return s[i].After(now.Add(-d)) }):]
		if len(in) < w.n {
			continue
		}
		// The window admits one more once the oldest len(in)-n+1 of its
		// sends have left it.
		if t := in[len(in)-w.n].Add(d); t.After(until) {
			until, by = t, fmt.Sprintf("%d per %s", w.n, w.name)
		}
	}
	if p.from != p.to {
		at := now
		if until.After(at) {
			at = until
		}
		if start := p.nextOpen(at); !start.Equal(at) {
			until, by = start, "working hours "+p.Hours
			if p.TimeZone != "" {
				by += " " + p.TimeZone
			}
		}
	}
	return until, by
}

// nextOpen is t when it falls within the working hours, else their next
// start.
func (p Pace) nextOpen(t time.Time) time.Time {
	loc := p.loc
	if loc == nil {
		loc = time.Local
	}
	lt := t.In(loc)
	m := lt.Hour()*60 + lt.Minute()
	open := p.from <= m && m < p.to
	if p.from > p.to {
		open = m >= p.from || m < p.to
	}
	if open {
		return t
	}
	day := lt.Day()
	if p.from < p.to && m >= p.to {
		day++ // past today's end: tomorrow's start
	}
	return time.Date(lt.Year(), lt.Month(), day, p.from/60, p.from%60, 0, 0, loc)
}
