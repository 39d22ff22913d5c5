package browser

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// limitMsg returns the usage-limit message the page shows, or "". With a
// `limited` selector, its visible text (which must match one of
// `limitedText`, if any); with `limitedText` alone, the page's `error`
// text or the new answer's text when one of them matches.
func (d *driver) limitMsg(st pageState, freshAnswer string) string {
	if d.site.Limited != "" {
		if st.Limited == "" || (len(d.limitRE) > 0 && !matchAny(d.limitRE, st.Limited)) {
			return ""
		}
		return st.Limited
	}
	if len(d.limitRE) == 0 {
		return ""
	}
	for _, t := range []string{st.Error, freshAnswer} {
		if t != "" && matchAny(d.limitRE, t) {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// limitErr is the account failure of a usage limit: it carries the hold
// (until the reset the message names, plus a small random delay, else
// the site's limitHold) for the lane to write.
func (d *driver) limitErr(msg string) error {
	now := time.Now()
	wait, parsed := time.Duration(0), false
	if at, ok := ParseReset(msg, now); ok {
		wait, parsed = at.Sub(now), true
	} else {
		wait = d.site.Hold()
	}
	hold := &taskfile.Hold{Site: d.siteName, Reason: taskfile.OneLine(msg), Since: now,
		Until: now.Add(time.Duration(float64(wait+holdJitter(wait)) * d.holdScale))}
	if parsed {
		hold.Wait = wait.Round(time.Second).String()
	}
	d.step("usage limit", "message", hold.Reason, "parsedWait", hold.Wait, "until", hold.Until.Format(time.RFC3339))
	how := "the message names no reset time: held for limitHold " + d.site.Hold().String()
	if parsed {
		how = "held until the reset it names (" + hold.Wait + ") plus a little"
	}
	return &attempt.TaskError{Class: taskfile.ClassAccount, Hold: hold,
		Err: attempt.Errorf(taskfile.ClassAccount, "site %s shows a usage limit: %q; %s, until %s", d.siteName, hold.Reason, how, hold.Until.Format(time.RFC3339))}
}

// holdJitter is the small random delay added to a hold, so that several
// daemons (or accounts) do not all come back at the very reset second:
// 2 s plus up to a tenth of the wait, at most a minute more.
func holdJitter(wait time.Duration) time.Duration {
	spread := min(wait/10, time.Minute)
	if spread <= 0 {
		return 2 * time.Second
	}
	return 2*time.Second + rand.N(spread)
}

// maxReset bounds a parsed reset: a "reset" further away than this is
// more likely a misread than a real limit, and the site's limitHold
// applies instead.
const maxReset = 8 * 24 * time.Hour

// enPart is one part of an English duration: "20 seconds", "2h", "an hour".
const enPart = `(?:(\d+(?:\.\d+)?)\s*(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)|\b(an?|one)\s+(second|minute|hour|day))\b`

var (
	// "in 20 seconds", "in 2 hours", "in 1 hour and 30 minutes", "in 1h 30m", "in an hour"
	enRelRE  = regexp.MustCompile(`(?i)\bin\s+((?:` + enPart + `[\s,]*(?:and\s+)?)+)`)
	enPartRE = regexp.MustCompile(`(?i)` + enPart)
	// "1 小时后", "20 秒后", "1小时30分钟后", "5 分钟之后"
	zhRelRE  = regexp.MustCompile(`((?:\d+(?:\.\d+)?\s*(?:秒钟|秒|分钟|分|个小时|小时|钟头|天)\s*)+)(?:之后|以后|后)`)
	zhPartRE = regexp.MustCompile(`(\d+(?:\.\d+)?)\s*(秒钟|秒|分钟|分|个小时|小时|钟头|天)`)
	// "after 3:40 PM", "at 15:40", "until 3 pm", "by 9:05 a.m."
	enAbsRE = regexp.MustCompile(`(?i)\b(?:after|at|until|till|by|from)\s+(\d{1,2})(?::(\d{2}))?\s*([ap]\.?\s?m\.?)?(?:[^\w]|$)`)
	// "14:05 后再试", "下午3:40以后", "15点20分后", "请于 14:05 之后重试"
	zhAbsRE = regexp.MustCompile(`(上午|早上|中午|下午|晚上|凌晨)?\s*(\d{1,2})\s*(?:[:：]\s*(\d{2})|点\s*(?:(\d{1,2})\s*分)?)\s*(?:之后|以后|后)`)
)

// ParseReset reads the reset time a usage-limit message names, relative
// ("try again in 20 seconds", "in 2 hours", "1 小时后") or absolute ("try
// again after 3:40 PM", "14:05 后再试"; the next such time of day in the
// local time zone, the browser's). It reports false when the message names
// none, or one past the bound of a believable reset (8 days).
func ParseReset(msg string, now time.Time) (time.Time, bool) {
	var at time.Time
	switch {
	case enRelRE.MatchString(msg):
		at = now.Add(sumParts(enPartRE, enRelRE.FindStringSubmatch(msg)[1]))
	case enAbsRE.MatchString(msg):
		m := enAbsRE.FindStringSubmatch(msg)
		if m[2] == "" && m[3] == "" {
			return time.Time{}, false // "at 3" is no time of day
		}
		h, _ := strconv.Atoi(m[1])
		mm, _ := strconv.Atoi(m[2])
		if ap := strings.ToLower(strings.NewReplacer(".", "", " ", "").Replace(m[3])); ap != "" {
			if h < 1 || h > 12 {
				return time.Time{}, false
			}
			h %= 12
			if ap == "pm" {
				h += 12
			}
		}
		at = nextClock(now, h, mm)
	case zhAbsRE.MatchString(msg):
		m := zhAbsRE.FindStringSubmatch(msg)
		h, _ := strconv.Atoi(m[2])
		mm, _ := strconv.Atoi(m[3] + m[4])
		if (m[1] == "下午" || m[1] == "晚上") && h < 12 {
			h += 12
		}
		if m[1] == "中午" && h < 11 {
			h += 12
		}
		at = nextClock(now, h, mm)
	case zhRelRE.MatchString(msg):
		at = now.Add(sumParts(zhPartRE, zhRelRE.FindStringSubmatch(msg)[1]))
	default:
		return time.Time{}, false
	}
	if at.IsZero() || at.Sub(now) > maxReset || at.Before(now) {
		return time.Time{}, false
	}
	return at, true
}

// sumParts adds up "1 hour 30 minutes" style parts.
func sumParts(re *regexp.Regexp, s string) time.Duration {
	var total time.Duration
	for _, p := range re.FindAllStringSubmatch(s, -1) {
		num, unit := p[1], p[2]
		if len(p) > 4 && num == "" {
			num, unit = "1", p[4] // "an hour", "a minute", "one day"
		}
		n, err := strconv.ParseFloat(num, 64)
		if err != nil {
			continue
		}
		total += time.Duration(n * float64(unitOf(unit)))
	}
	return total
}

func unitOf(u string) time.Duration {
	u = strings.ToLower(u)
	switch {
	case u == "天" || strings.HasPrefix(u, "d"):
		return 24 * time.Hour
	case strings.Contains(u, "小时") || u == "钟头" || strings.HasPrefix(u, "h"):
		return time.Hour
	case strings.HasPrefix(u, "分") || strings.HasPrefix(u, "m"):
		return time.Minute
	default:
		return time.Second
	}
}

// nextClock is the next time the clock in now's zone shows h:m (within
// a few minutes past counts as now: clocks differ).
func nextClock(now time.Time, h, m int) time.Time {
	if h > 23 || m > 59 {
		return time.Time{}
	}
	t := time.Date(now.Year(), now.Month(), now.Day(), h, m, 0, 0, now.Location())
	switch {
	case t.After(now):
		return t
	case now.Sub(t) <= 5*time.Minute:
		return now
	default:
		return t.AddDate(0, 0, 1)
	}
}
