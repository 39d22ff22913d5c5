package config

import "time"

// Timing is every duration the lanes and the status view derive from the
// config's heartbeat, staleAfter and retryBackoff, each named once here
// with its reason. Nothing else reads staleAfter raw.
type Timing struct {
	// Heartbeat is how often a running attempt rewrites heartbeatAt while
	// it shows liveness.
	Heartbeat time.Duration
	// StaleAfter is the staleness rule's threshold (see Stale): a running
	// task whose last sign of life is older is reclaimed, and status flags
	// it stale.
	StaleAfter time.Duration
	// LivenessDeadline: an attempt that shows no liveness (no beat, no
	// successful probe) for this long is stopped as stale by its own
	// runner, at the moment any other daemon would reclaim it.
	LivenessDeadline time.Duration
	// ProbeTimeout bounds one liveness probe (the web lane's CDP
	// round-trip): a third of staleAfter, at most 10 s, so a slow but live
	// browser has time to answer and a hung one still goes stale.
	ProbeTimeout time.Duration
	// ClaimGrace is how long a running/ file may stay unmarked (moved by a
	// claim, not yet rewritten by it) before Reclaim counts it a crash's
	// leftover: a live claim marks within milliseconds, staleAfter is far
	// beyond any of them.
	ClaimGrace time.Duration
	// PendingGrace is how long a pending/ file may stay not normalized
	// before the periodic merge normalizes it: on a share it is most likely
	// another daemon's intake between its move and its rewrite; one that
	// lasts staleAfter was cut short by a crash.
	PendingGrace time.Duration
	// ReclaimEvery bounds how often a lane lists running/: at most once a
	// heartbeat, and at least once a second, so a dead local owner's task
	// is taken back within a second.
	ReclaimEvery time.Duration
	// ReclaimRetryDelay is the notBefore of a reclaimed task that will run
	// again: the first retry back-off, capped at staleAfter, since the task
	// has already waited staleAfter to be reclaimed.
	ReclaimRetryDelay time.Duration
}

// Timing returns the durations derived from c (see Timing).
func (c *Config) Timing() Timing {
	stale := c.StaleAfter.D()
	return Timing{
		Heartbeat:         c.Heartbeat.D(),
		StaleAfter:        stale,
		LivenessDeadline:  stale,
		ProbeTimeout:      min(stale/3, 10*time.Second),
		ClaimGrace:        stale,
		PendingGrace:      stale,
		ReclaimEvery:      min(c.Heartbeat.D(), time.Second),
		ReclaimRetryDelay: min(c.RetryBackoff.D(), stale),
	}
}
