package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/status"
)

func init() {
	register("status", "per lane and batch: counts, progress, running tasks, ETA, what is held and why", cmdStatus)
}

// nowEnv names a variable that fixes the clock of status and results, for
// reproducible reports and tests: an RFC 3339 time.
const nowEnv = "SPOOLGATE_NOW"

func clock(env *Env) (func() time.Time, error) {
	v := env.Getenv(nowEnv)
	if v == "" {
		return time.Now, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, usagef("%s=%q is not an RFC 3339 time", nowEnv, v)
	}
	return func() time.Time { return t }, nil
}

func cmdStatus(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("status", &c)
	asJSON := fs.Bool("json", false, "print the status as JSON (stable: see README)")
	watch := fs.Bool("watch", false, "redraw in place until interrupted")
	interval := fs.Duration("interval", time.Second, "redraw period of --watch")
	archive := fs.Bool("archive", false, "count the tasks of each lane's archive/ too")
	tl := fs.String("timeline", "", "write the timeline of attempts to this SVG file (the status page's picture) and print nothing else")
	tlBatch := fs.String("batch", "", "with --timeline: only this batch's attempts (from its first claim, unless --since)")
	tlSince := fs.String("since", "", "with --timeline: how far back, such as 30m, 2h, 1d (default 2h, or the whole batch)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("status takes no arguments (got %q)", pos[0])
	}
	if *interval <= 0 {
		return usagef("status: --interval must be positive")
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	now, err := clock(env)
	if err != nil {
		return err
	}
	snap := status.NewSnapshotter(cfg, nil)
	snap.Archive = *archive
	if *tl != "" || *tlBatch != "" || *tlSince != "" {
		return writeTimelineFile(env, snap, now(), *tl, *tlBatch, *tlSince)
	}
	render := func(w io.Writer) error {
		st, err := snap.Snapshot(now())
		if err != nil {
			return err
		}
		if keyNote(cfg) != "" && hasCoordination(spool.NewLayout(cfg.Spool)) {
			st.Seals = keyNote(cfg)
		}
		if *asJSON {
			return writeStatusJSON(w, st)
		}
		return writeStatusText(w, st)
	}
	if !*watch {
		return render(env.Stdout)
	}
	t := time.NewTicker(*interval)
	defer t.Stop()
	var buf bytes.Buffer
	for {
		buf.Reset()
		buf.WriteString("\x1b[H\x1b[2J") // cursor home, clear screen
		if err := render(&buf); err != nil {
			fmt.Fprintf(&buf, "spoolgate: %s\n", safetext.Text(err.Error())) // keep watching: the share may come back
		}
		if _, err := env.Stdout.Write(buf.Bytes()); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// writeStatusJSON writes st as indented JSON: exact values, with what
// would drive a terminal \u-escaped (safetext.JSON).
func writeStatusJSON(w io.Writer, st *status.Status) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(st); err != nil {
		return err
	}
	_, err := w.Write(safetext.JSON(buf.Bytes()))
	return err
}

// writeStatusText renders st for people. Every string in st may come
// from a file someone dropped (batch, taskId, model, host and file names),
// so st is made safe field by field first (columns are measured on what
// is shown), and the whole text once more on the way out.
func writeStatusText(w io.Writer, st *status.Status) error {
	safetext.Strings(st)
	var buf bytes.Buffer
	renderStatusText(&buf, st)
	_, err := io.WriteString(w, safetext.Text(buf.String()))
	return err
}

func renderStatusText(w io.Writer, st *status.Status) {
	fmt.Fprintf(w, "spool %s  at %s\n", st.Spool, st.Now.Local().Format("2006-01-02 15:04:05 MST"))
	if st.Incoming > 0 {
		fmt.Fprintf(w, "incoming %d (lane-less drops not taken yet)\n", st.Incoming)
	}
	for _, ln := range st.Lanes {
		fmt.Fprintln(w)
		head := fmt.Sprintf("%s lane  concurrency %d", ln.Lane, ln.Concurrency)
		if r := ln.RunnableSessions; r != nil && *r < ln.Concurrency {
			head += fmt.Sprintf(" (%d can run)", *r)
		}
		if ln.Paused {
			head += "  PAUSED"
		}
		if ln.Runner != "" {
			head += "  runner " + ln.Runner
		}
		fmt.Fprintln(w, head)
		fmt.Fprintf(w, "  %s  ETA %s\n", bar(ln.Progress), etaText(st.Now, ln.ETA, true))
		c := ln.Counts
		fmt.Fprintf(w, "  pending %d  running %d  success %d  failed %d  canceled %d  rejected %d",
			c.Pending, c.Running, c.Success, c.Failed, c.Canceled, ln.Rejected)
		if ln.Incoming > 0 {
			fmt.Fprintf(w, "  incoming %d (not taken yet)", ln.Incoming)
		}
		fmt.Fprintln(w)
		if n := ln.ResultChecks["differs"]; n > 0 {
			fmt.Fprintf(w, "  checked against the page: %d verified, %d DIFFER (%s; see their resultDiff), %d unchecked\n",
				ln.ResultChecks["verified"], n, strings.Join(ln.Differs, ", "), ln.ResultChecks["unchecked"])
		}
		for _, r := range ln.Running {
			line := fmt.Sprintf("  running %s  model %s  attempt %d  elapsed %s  heartbeat %s ago",
				r.TaskID, r.Model, r.Attempt, dur(r.ElapsedSeconds), dur(r.HeartbeatAgeSeconds))
			if r.Owner != "" {
				line += "  on " + r.Owner
			}
			if r.Delivery != "" {
				line += "  " + r.Delivery
				if r.Conversation != "" {
					line += " " + r.Conversation
				}
			}
			if r.Stale {
				line += "  STALE"
			}
			fmt.Fprintln(w, line)
		}
		writeSessions(w, st.Now, ln)
		for _, h := range ln.Held {
			fmt.Fprintf(w, "  held: %s\n", h.Message)
		}
		writeRejectedDrops(w, st.Now, ln)
	}
	if len(st.Batches) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "batches")
		rows := make([][]string, 0, len(st.Batches))
		for _, b := range st.Batches {
			var shares []string
			for _, bl := range b.Lanes {
				shares = append(shares, fmt.Sprintf("%s %d/%d", bl.Lane, bl.Progress.Finished, bl.Progress.Total))
			}
			rows = append(rows, []string{b.Batch, fmt.Sprintf("%s  ETA %s  (%s; failed %d, canceled %d)", bar(b.Progress),
				etaText(st.Now, b.ETA, false), strings.Join(shares, ", "), b.Counts.Failed, b.Counts.Canceled)})
		}
		writeColumns(w, "  ", rows)
	}
	writeFailed(w, st)
	writeForeign(w, st)
}

const barWidth = 20

// bar draws "[#####...............]  5/20  25%".
func bar(p status.Progress) string {
	fill := 0
	if p.Total > 0 {
		fill = barWidth * p.Finished / p.Total
	}
	return fmt.Sprintf("[%s%s] %d/%d %3d%%", strings.Repeat("#", fill), strings.Repeat(".", barWidth-fill), p.Finished, p.Total, p.Percent)
}

func etaText(now time.Time, e status.ETA, basis bool) string {
	var s string
	switch {
	case e.Seconds == nil:
		s = "unknown (" + e.Note + ")"
	case *e.Seconds == 0:
		s = "done"
	default:
		s = dur(*e.Seconds) + " (" + clockText(now, *e.At) + ")"
		if e.Note != "" {
			s += ", " + e.Note
		}
	}
	if basis {
		if e.Samples > 0 {
			s += fmt.Sprintf("; typical %s: median of the last %s", dur(e.TypicalSeconds), pluralS(e.Samples, "success", "successes"))
		} else {
			s += fmt.Sprintf("; typical %s: default, no success yet", dur(e.TypicalSeconds))
		}
	}
	return s
}

// clockText shows t as a local clock time, with the date if not today.
func clockText(now, t time.Time) string {
	t, now = t.Local(), now.Local()
	if t.Format("2006-01-02") == now.Format("2006-01-02") {
		return "at " + t.Format("15:04:05")
	}
	return "at " + t.Format("2006-01-02 15:04")
}

// dur shows seconds as 45s, 1m05s, 2h03m; under 10s with a tenth.
func dur(sec float64) string {
	switch {
	case sec < 10:
		return fmt.Sprintf("%.1fs", sec)
	case sec < 59.5:
		return fmt.Sprintf("%.0fs", sec)
	}
	d := time.Duration(sec+0.5) * time.Second
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%dh%02dm", h, m)
	}
	return fmt.Sprintf("%dm%02ds", m, s)
}

func pluralS(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
