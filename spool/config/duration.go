package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration that reads as "15s", "2m", "30d" (see
// ParseDuration) and writes as Go writes durations.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration such as 15s", n.Line)
	}
	if strings.HasPrefix(strings.TrimSpace(n.Value), "-") {
		return fmt.Errorf("line %d: duration %q is negative", n.Line, n.Value)
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (such as 15s, 2m, 30d)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// ParseDuration is time.ParseDuration that also takes days, the unit of
// retention periods: "30d", "1.5d", "1d12h". A day is 24 hours (retention
// is not a calendar). Negative durations are refused.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	days, rest, hasDays := strings.Cut(s, "d")
	if !hasDays {
		d, err := time.ParseDuration(s)
		if err == nil && d < 0 {
			return 0, errors.New("negative")
		}
		return d, err
	}
	// Only a leading day count: "d" appears in no other unit.
	n, err := strconv.ParseFloat(days, 64)
	if err != nil || n < 0 || days == "" || strings.ContainsAny(days, "eEpPxX_+-") || strings.Contains(rest, "d") {
		return 0, fmt.Errorf("%q: a day count is digits followed by d, such as 30d", s)
	}
	const maxDays = 100 * 365 // far beyond any retention; keeps the sum in range
	if n > maxDays {
		return 0, fmt.Errorf("%q: over %d days", s, maxDays)
	}
	d := time.Duration(n * float64(24*time.Hour))
	if rest != "" {
		r, err := time.ParseDuration(rest)
		if err != nil {
			return 0, err
		}
		if r < 0 {
			return 0, errors.New("negative")
		}
		d += r
	}
	return d, nil
}
