package taskfile

import (
	"time"
)

// Priority is a task's `priority`: high, normal or low ("" is normal).
// A lane takes the ready task with the highest priority, then the oldest
// (the order of the index within one priority is unchanged); a task that
// has waited agingAfter rises one level, and one more for each further
// agingAfter, so none waits for ever behind newer high tasks.
type Priority string

const (
	PriorityHigh   Priority = "high"
	PriorityNormal Priority = "normal"
	PriorityLow    Priority = "low"
)

// Priority levels, in the index's order; normal is the zero value, so an
// Entry built without a priority is normal.
const (
	LevelLow    = -1
	LevelNormal = 0
	LevelHigh   = 1
	Levels      = 3 // lists per index: level+1
)

// Valid reports whether p is a priority ("" counts: it is normal).
func (p Priority) Valid() bool {
	return p == "" || p == PriorityHigh || p == PriorityNormal || p == PriorityLow
}

// Level is p's place in the order: low -1, normal 0 (also "" and
// anything unknown), high 1.
func (p Priority) Level() int {
	switch p {
	case PriorityHigh:
		return LevelHigh
	case PriorityLow:
		return LevelLow
	}
	return LevelNormal
}

// String is p's name, "normal" for "".
func (p Priority) String() string {
	if p == "" {
		return string(PriorityNormal)
	}
	return string(p)
}

// Aged is p's level (see Level) for a task submitted then, at now: one
// level up per agingAfter waited, at most high.
func (p Priority) Aged(submitted, now time.Time, agingAfter time.Duration) int {
	return AgedLevel(p.Level(), submitted, now, agingAfter)
}

// aged is the priority a task of level base has after waiting since
// submitted: one level up per agingAfter waited, at most high.
func AgedLevel(base int, submitted, now time.Time, agingAfter time.Duration) int {
	if base >= LevelHigh || agingAfter <= 0 || submitted.IsZero() || !now.After(submitted) {
		return base
	}
	return min(LevelHigh, base+int(now.Sub(submitted)/agingAfter))
}
