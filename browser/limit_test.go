package browser

import (
	"testing"
	"time"
)

func TestParseReset(t *testing.T) {
	loc := time.FixedZone("here", 8*3600)
	now := time.Date(2026, 3, 5, 14, 0, 0, 0, loc)
	at := func(h, m, dayOff int) time.Time { return time.Date(2026, 3, 5+dayOff, h, m, 0, 0, loc) }
	for _, c := range []struct {
		msg  string
		want time.Time // zero: no reset named
	}{
		{"You've reached the limit, try again at 3:40 PM", at(15, 40, 0)},
		{"Usage cap reached. Try again after 3:40 pm.", at(15, 40, 0)},
		{"limit reached until 9:05 a.m.", at(9, 5, 1)}, // past today: tomorrow
		{"Please come back at 13:59", now},             // a minute ago: now (clocks differ)
		{"try again after 15:30", at(15, 30, 0)},
		{"请求过于频繁，14:05 后再试", at(14, 5, 0)},
		{"已达上限，请于下午3:40以后重试", at(15, 40, 0)},
		{"请 15点20分后 再试", at(15, 20, 0)},
		{"额度已用完，8:00 之后恢复", at(8, 0, 1)},
		{"Too many requests. Try again in 20 seconds.", now.Add(20 * time.Second)},
		{"try again in 2 hours", now.Add(2 * time.Hour)},
		{"You can send more messages in 1 hour and 30 minutes", now.Add(90 * time.Minute)},
		{"Limit resets in 1h 5m", now.Add(65 * time.Minute)},
		{"try again in an hour", now.Add(time.Hour)},
		{"Try again in 2 minutes", now.Add(2 * time.Minute)},
		{"请求过于频繁，请 1 小时后再试", now.Add(time.Hour)},
		{"1小时30分钟后可以继续使用", now.Add(90 * time.Minute)},
		{"请在 20 秒后重试", now.Add(20 * time.Second)},
		{"请求过于频繁", time.Time{}},
		{"You've reached your limit. Upgrade for more.", time.Time{}},
		{"try again at 3", time.Time{}},
		{"try again in a moment", time.Time{}},
		{"try again at 25:00", time.Time{}},
		{"try again in 30 days", time.Time{}}, // past the believable bound
	} {
		got, ok := ParseReset(c.msg, now)
		if ok != !c.want.IsZero() || !got.Equal(c.want) {
			t.Errorf("ParseReset(%q) = %v, %v; want %v", c.msg, got, ok, c.want)
		}
	}
}

// FuzzParseReset: page text is anything; the parser must not panic and
// must never name a reset in the past or past its bound.
func FuzzParseReset(f *testing.F) {
	for _, s := range []string{"try again at 3:40 PM", "14:05 后再试", "in 20 seconds", "1 小时后", "in 1h 30m", "下午3:40以后", "15点20分后", "at 12:00 am"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 5, 14, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, msg string) {
		at, ok := ParseReset(msg, now)
		if ok && (at.Before(now) || at.Sub(now) > maxReset) {
			t.Fatalf("ParseReset(%q) = %v: outside [now, now+%s]", msg, at, maxReset)
		}
	})
}

func TestHoldJitter(t *testing.T) {
	for _, w := range []time.Duration{0, time.Second, 2 * time.Minute, time.Hour, 10 * time.Hour} {
		for range 50 {
			j := holdJitter(w)
			if j < 2*time.Second || j > 2*time.Second+time.Minute || j > 2*time.Second+w/10+time.Nanosecond && w/10 > 0 {
				t.Fatalf("holdJitter(%s) = %s", w, j)
			}
		}
	}
}
