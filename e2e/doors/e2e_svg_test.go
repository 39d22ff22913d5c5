//go:build linux

package doors

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// svgBar is one bar of a timeline, as the SVG carries it.
type svgBar struct {
	Task, Outcome, Row, Lane, Fill, Start, End string
	Attempt, N                                 int
}

var svgBarRe = regexp.MustCompile(`<rect class="tl-bar" data-outcome="([^"]*)" data-lane="([^"]*)" data-row="([^"]*)" data-task="([^"]*)" data-attempt="(\d+)" data-n="(\d+)" data-start="([^"]*)" data-end="([^"]*)"[^>]* fill="([^"]*)">`)
var svgRowRe = regexp.MustCompile(`<g class="tl-row" data-row="([^"]*)"`)

// parseSVGBars reads the bars and rows of a timeline file.
func parseSVGBars(t *testing.T, svg string) ([]svgBar, []string) {
	t.Helper()
	var bars []svgBar
	for _, m := range svgBarRe.FindAllStringSubmatch(svg, -1) {
		a, _ := strconv.Atoi(m[5])
		n, _ := strconv.Atoi(m[6])
		bars = append(bars, svgBar{Outcome: m[1], Lane: m[2], Row: m[3], Task: m[4], Attempt: a, N: n, Start: m[7], End: m[8], Fill: m[9]})
	}
	if c := strings.Count(svg, `class="tl-bar"`); c != len(bars) {
		t.Fatalf("parsed %d of %d bars", len(bars), c)
	}
	var rows []string
	for _, m := range svgRowRe.FindAllStringSubmatch(svg, -1) {
		rows = append(rows, m[1])
	}
	return bars, rows
}

func stampOf(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }
