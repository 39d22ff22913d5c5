//go:build race

package main

// raceSlowdown is how much slower the race detector makes this package's
// CPU-bound work: time bounds measured without it are scaled by it.
const raceSlowdown = 10
