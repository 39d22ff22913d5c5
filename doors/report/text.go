// Package report is what the command line and the console both show of a
// spool: the status as text and JSON, the result rows as CSV and JSON lines.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool/status"
)

// writeStatusJSON writes st as indented JSON: exact values, with what
// would drive a terminal \u-escaped (safetext.JSON).
func WriteStatusJSON(w io.Writer, st *status.Status) error {
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
func WriteStatusText(w io.Writer, st *status.Status) error {
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
		fmt.Fprintf(w, "  %s  ETA %s\n", Bar(ln.Progress), ETAText(st.Now, ln.ETA, true))
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
		if !ln.Tokens.IsZero() {
			fmt.Fprintf(w, "  %s (successes)\n", TokensText(ln.Tokens))
		}
		if ln.Reasoning > 0 {
			fmt.Fprintf(w, "  thinking kept apart (reasoning): %d of the successes\n", ln.Reasoning)
		}
		for _, f := range ln.FallingBack {
			fmt.Fprintf(w, "  model %s: %s did not deliver on any of its last %d answers (read by %s instead; see a task's log): check its site's keys with `spoolgate check --suggest`\n",
				safetext.Line(f.Model), safetext.Line(f.Methods), f.Answers, safetext.Line(f.Method))
		}
		for _, r := range ln.Running {
			line := fmt.Sprintf("  running %s  model %s  attempt %d  elapsed %s  heartbeat %s ago",
				r.TaskID, r.Model, r.Attempt, Dur(r.ElapsedSeconds), Dur(r.HeartbeatAgeSeconds))
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
			line := fmt.Sprintf("%s  ETA %s  (%s; failed %d, canceled %d)", Bar(b.Progress),
				ETAText(st.Now, b.ETA, false), strings.Join(shares, ", "), b.Counts.Failed, b.Counts.Canceled)
			if !b.Tokens.IsZero() {
				line += "  " + TokensText(b.Tokens)
			}
			rows = append(rows, []string{b.Batch, line})
		}
		writeColumns(w, "  ", rows)
	}
	writeFailed(w, st)
	writeForeign(w, st)
}

const barWidth = 20

// bar draws "[#####...............]  5/20  25%".
func Bar(p status.Progress) string {
	fill := 0
	if p.Total > 0 {
		fill = barWidth * p.Finished / p.Total
	}
	return fmt.Sprintf("[%s%s] %d/%d %3d%%", strings.Repeat("#", fill), strings.Repeat(".", barWidth-fill), p.Finished, p.Total, p.Percent)
}

func ETAText(now time.Time, e status.ETA, basis bool) string {
	var s string
	switch {
	case e.Seconds == nil:
		s = "unknown (" + e.Note + ")"
	case *e.Seconds == 0 && strings.HasPrefix(e.Note, status.OverdueNote):
		s = "due now (" + e.Note + ")"
	case *e.Seconds == 0 && e.Note != "":
		s = "done (" + e.Note + ")"
	case *e.Seconds == 0:
		s = "done"
	default:
		s = Dur(*e.Seconds) + " (" + clockText(now, *e.At) + ")"
		if e.Note != "" {
			s += ", " + e.Note
		}
	}
	if basis {
		if e.Samples > 0 {
			s += fmt.Sprintf("; typical %s: median of the last %s", Dur(e.TypicalSeconds), pluralS(e.Samples, "success", "successes"))
		} else {
			s += fmt.Sprintf("; typical %s: default, no success yet", Dur(e.TypicalSeconds))
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
func Dur(sec float64) string {
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

// TokensText is "tokens 1200 in (300 cached) + 3400 out (800 reasoning),
// cost 0.0123; estimated (web) 90 in + 400 out of 3 answers" (the cost
// where the models have a price; "+ N answers of models without a price"
// for the others; the estimated part where web answers were counted).
func TokensText(t status.Tokens) string {
	s := ""
	if t.Prompt+t.Completion > 0 {
		s = fmt.Sprintf("tokens %d in%s + %d out%s", t.Prompt, part(t.Cached, "cached"), t.Completion, part(t.Reasoning, "reasoning"))
	}
	if t.Cost != nil {
		s += fmt.Sprintf(", cost %.4f", *t.Cost)
		if t.Unpriced > 0 {
			s += fmt.Sprintf(" (+ %d answers of models without a price)", t.Unpriced)
		}
	}
	if e := t.Estimated; e != nil {
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf("estimated (web) %d in + %d out%s of %s", e.Prompt, e.Completion, part(e.Reasoning, "reasoning"), pluralS(e.Answers, "answer", "answers"))
	}
	return s
}

// part is " (N what)", or nothing for zero.
func part(n int, what string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d %s)", n, what)
}
