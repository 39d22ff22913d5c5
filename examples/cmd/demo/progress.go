package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/status"
)

// snapshot runs `spoolgate status --json` and decodes it: the demo watches
// the spool through the same stable interface an operator's script uses.
func snapshot(ctx context.Context, bin, cfgPath string) (*status.Status, error) {
	out, err := exec.CommandContext(ctx, bin, "status", "--json", "--config", cfgPath).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, fmt.Errorf("spoolgate status: %w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("spoolgate status: %w", err)
	}
	var st status.Status
	if err := json.Unmarshal(out, &st); err != nil {
		return nil, fmt.Errorf("spoolgate status --json: %w", err)
	}
	return &st, nil
}

// progress renders per-lane progress: redrawn in place on a terminal, one
// line every few seconds otherwise (a log, CI).
type progress struct {
	w        io.Writer
	tty      bool
	lines    int // lines drawn last time (tty)
	lastLine time.Time
	start    time.Time
}

func newProgress(w io.Writer, start time.Time) *progress {
	p := &progress{w: w, start: start}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func bar(done, total, width int) string {
	if total <= 0 {
		return strings.Repeat("░", width)
	}
	n := done * width / total
	return strings.Repeat("█", n) + strings.Repeat("░", width-n)
}

func eta(e status.ETA) string {
	if e.Seconds == nil {
		if e.Note != "" {
			return "ETA ? (" + e.Note + ")"
		}
		return "ETA ?"
	}
	if *e.Seconds == 0 {
		return "done"
	}
	return fmt.Sprintf("ETA %4.0fs", *e.Seconds)
}

// laneLines renders one line per lane.
func laneLines(st *status.Status) []string {
	var out []string
	for _, ln := range st.Lanes {
		c := ln.Counts
		line := fmt.Sprintf("%-3s %s %2d/%-2d  running %d  pending %2d  failed %d  %s",
			ln.Lane, bar(c.Finished(), c.Total, 24), c.Finished(), c.Total, c.Running, c.Pending, c.Failed, eta(ln.ETA))
		var run []string
		for _, r := range ln.Running {
			s := fmt.Sprintf("%s %.0fs", r.TaskID, r.ElapsedSeconds)
			if r.Attempt > 1 {
				s += fmt.Sprintf(" (attempt %d)", r.Attempt)
			}
			run = append(run, s)
		}
		if len(run) > 0 {
			line += "  [" + strings.Join(run, ", ") + "]"
		}
		for _, h := range ln.Held {
			line += "  held: " + h.Message
		}
		out = append(out, line)
	}
	return out
}

// show draws st; force draws even off a terminal.
func (p *progress) show(st *status.Status, force bool) {
	lines := laneLines(st)
	elapsed := time.Since(p.start).Round(time.Second)
	if p.tty {
		if p.lines > 0 {
			fmt.Fprintf(p.w, "\x1b[%dA", p.lines) // back to the top of the last drawing
		}
		fmt.Fprintf(p.w, "\x1b[2Kelapsed %s\n", elapsed)
		for _, l := range lines {
			fmt.Fprintf(p.w, "\x1b[2K%s\n", l)
		}
		p.lines = len(lines) + 1
		return
	}
	if !force && time.Since(p.lastLine) < 5*time.Second {
		return
	}
	p.lastLine = time.Now()
	fmt.Fprintf(p.w, "[%6s]\n", elapsed)
	for _, l := range lines {
		fmt.Fprintf(p.w, "  %s\n", l)
	}
}
