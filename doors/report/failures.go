package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"

	"github.com/spoolgate/spoolgate/spool/status"
)

// maxReasonCells is how many terminal cells of a reason the text shows.
const maxReasonCells = 100

// writeRejectedDrops lists a lane's latest rejected drops: when, file, why.
func writeRejectedDrops(w io.Writer, now time.Time, ln status.Lane) {
	if len(ln.RejectedDrops) == 0 {
		return
	}
	fmt.Fprintln(w, "  rejected drops, newest first:")
	rows := make([][]string, 0, len(ln.RejectedDrops))
	for _, d := range ln.RejectedDrops {
		rows = append(rows, []string{ShortTime(now, d.At), d.File, clipCells(d.Reason, maxReasonCells)})
	}
	writeColumns(w, "    ", rows)
	if ln.RejectedMore > 0 {
		fmt.Fprintf(w, "    ... and %d more (%s/failed/*.error)\n", ln.RejectedMore, ln.Lane)
	}
}

// writeFailed lists the latest failed tasks: task, batch, class,
// attempts, when, why.
func writeFailed(w io.Writer, st *status.Status) {
	if len(st.Failed) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "failed tasks, newest first")
	rows := make([][]string, 0, len(st.Failed))
	for _, f := range st.Failed {
		batch, class, when := f.Batch, f.ErrorClass, "-"
		if batch == "" {
			batch = "-"
		}
		if class == "" {
			class = "-"
		}
		if f.FinishedAt != nil {
			when = ShortTime(st.Now, *f.FinishedAt)
		}
		rows = append(rows, []string{f.Lane + "/" + f.TaskID, batch, class, pluralS(f.Attempt, "attempt", "attempts"), when,
			clipCells(f.Error, maxReasonCells)})
	}
	writeColumns(w, "  ", rows)
	if st.FailedMore > 0 {
		fmt.Fprintf(w, "  ... and %d more (spoolgate results --format csv)\n", st.FailedMore)
	}
}

// writeForeign lists the foreign files: what no daemon of this
// installation wrote among the coordination state, ignored and kept.
func writeForeign(w io.Writer, st *status.Status) {
	if st.Seals != "" {
		fmt.Fprintln(w)
		fmt.Fprintln(w, st.Seals)
	}
	if len(st.Foreign) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "foreign files (not written by a daemon of this installation: ignored, never deleted)")
	rows := make([][]string, 0, len(st.Foreign))
	for _, f := range st.Foreign {
		rows = append(rows, []string{f.File, f.Kind, clipCells(f.Reason, maxReasonCells)})
	}
	writeColumns(w, "  ", rows)
	if st.ForeignMore > 0 {
		fmt.Fprintf(w, "  ... and %d more\n", st.ForeignMore)
	}
}

// writeColumns writes rows with every column but the last padded to the
// widest cell of its column, in terminal cells: a CJK character or an
// emoji takes two (go-runewidth, by grapheme cluster), so a Chinese batch
// name keeps the columns straight.
func writeColumns(w io.Writer, indent string, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for i, c := range r[:len(r)-1] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], runewidth.StringWidth(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			if i < len(r)-1 {
				b.WriteString(runewidth.FillRight(c, widths[i]))
				b.WriteString("  ")
			} else {
				b.WriteString(c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// clipCells cuts s to at most n terminal cells, marking a cut with "...".
func clipCells(s string, n int) string {
	return runewidth.Truncate(s, n, "...")
}

// shortTime shows t as a local clock time, with the date if not today.
func ShortTime(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return strings.TrimPrefix(clockText(now, t), "at ")
}
