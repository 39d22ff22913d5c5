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

// Number is what a Spread is taken of.
type Number interface {
	~int | ~int64 | ~float64
}

// Spread is the median of a set of figures with its least and greatest:
// how a strategy's repeated runs came out.
type Spread[T Number] struct {
	Median, Min, Max T
}

// SpreadOf is the Spread of xs (the median of an even count is the mean of
// the middle two), or the zero Spread when xs is empty.
func SpreadOf[T Number](xs []T) Spread[T] {
	if len(xs) == 0 {
		return Spread[T]{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Spread[T]{Median: med, Min: s[0], Max: s[n-1]}
}

// Over is the Spread of f over runs: one figure per run.
func Over[T Number](runs []Result, f func(Result) T) Spread[T] {
	xs := make([]T, len(runs))
	for i, r := range runs {
		xs[i] = f(r)
	}
	return SpreadOf(xs)
}
