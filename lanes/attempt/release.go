package attempt

// Releaser is an Executor that keeps something of its session between
// attempts: the web executor's warm browser. The lane calls Release when
// the session gives up its account (its lease goes: no more work, the
// account switched off or held, another host took it) and when the lane
// stops, with wait: then Release returns only once what it kept is gone.
// Without wait it must not block; it leaves alone an attempt that runs.
type Releaser interface {
	Release(wait bool)
}
