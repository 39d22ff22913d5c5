package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spoolgate/spoolgate/doors/report"
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
	snap := status.NewSnapshotter(c.store, nil)
	snap.Archive = *archive
	if *tl != "" || *tlBatch != "" || *tlSince != "" {
		return writeTimelineFile(env, snap, now(), *tl, *tlBatch, *tlSince)
	}
	render := func(w io.Writer) error {
		st, err := snap.Snapshot(now())
		if err != nil {
			return err
		}
		if c.keyNote != "" && hasCoordination(spool.NewLayout(cfg.Spool)) {
			st.Seals = c.keyNote
		}
		if *asJSON {
			return report.WriteStatusJSON(w, st)
		}
		return report.WriteStatusText(w, st)
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
