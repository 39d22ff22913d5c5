package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/status/timeline"
)

// writeTimelineFile is `status --timeline FILE [--batch B] [--since D]`:
// the status page's timeline as a stand-alone SVG file (no links: a file
// on its own has no pages to link to), written durably.
func writeTimelineFile(env *Env, snap *status.Snapshotter, now time.Time, file, batch, since string) error {
	if file == "" {
		return usagef("status: --batch and --since go with --timeline FILE.svg")
	}
	q := status.TimelineQuery{Batch: batch, Labels: timeline.LabelsEN}
	if since != "" {
		d, err := config.ParseDuration(since)
		if err != nil || d <= 0 {
			return usagef("status: --since %q: want a duration such as 30m, 2h or 1d", since)
		}
		q.Since = d
	}
	_, c, err := snap.SnapshotTimeline(now, q)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := timeline.Document(&b, c); err != nil {
		return err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	if err := fsx.WriteFileAtomic(abs, b.Bytes()); err != nil {
		return fmt.Errorf("status --timeline: %w", err)
	}
	rows := "rows"
	if len(c.Rows) == 1 {
		rows = "row"
	}
	fmt.Fprintf(env.Stdout, "timeline of %d attempts in %d %s, %s to %s: %s\n", len(c.Bars), len(c.Rows), rows,
		c.From.Local().Format("2006-01-02 15:04"), now.Local().Format("15:04"), abs)
	return nil
}
