//go:build linux

package main

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
)

// e2eStatusURL waits for the daemon's "status page" log line and returns
// its address.
func e2eStatusURL(t *testing.T, d *daemon) string {
	t.Helper()
	re := regexp.MustCompile(`status page.*url=(http://127\.0\.0\.1:\d+)/`)
	var url string
	testkit.Wait(t, "the status page's address in the log", 20*time.Second, func() bool {
		m := re.FindStringSubmatch(d.logText())
		if m != nil {
			url = m[1]
		}
		return m != nil
	})

	return url
}

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

func e2eGet(t *testing.T, url string) (string, http.Header) {
	t.Helper()
	body, hdr, code := e2eGetCode(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d", url, code)
	}
	return body, hdr
}

func e2eGetCode(t *testing.T, url string) (string, http.Header, int) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.Header, resp.StatusCode
}

func stampOf(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }
