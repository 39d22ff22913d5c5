//go:build !race

package main

// raceSlowdown: see race_on_test.go.
const raceSlowdown = 1
