package bench

import (
	"slices"
	"time"
)

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of ds, or
// 0 when ds is empty.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(float64(len(s))*p/100 + 0.999999)
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// Mean is the arithmetic mean of ds, or 0 when ds is empty.
func Mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var s time.Duration
	for _, d := range ds {
		s += d
	}
	return s / time.Duration(len(ds))
}

// Unscale turns a measured duration into field-report time.
func Unscale(d time.Duration, scale float64) time.Duration {
	return time.Duration(float64(d) / scale)
}
