package cli

import (
	"context"
	"fmt"

	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/spool"
)

func init() {
	register("results", "the merged result table of both lanes, one row per lane and taskId (jsonl or csv)", cmdResults)
}

func cmdResults(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("results", &c)
	batch := fs.String("batch", "", "only tasks of this batch (the archive included)")
	archive := fs.Bool("archive", false, "also read <lane>/archive/ (tasks moved there by retention)")
	format := fs.String("format", "jsonl", "jsonl, csv or xlsx (an Excel workbook: redirect it to a file)")
	encoding := fs.String("encoding", "utf-8", "csv only: utf-8, or gb18030 for spreadsheet programs that read a Chinese code page")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *format != "jsonl" && *format != "csv" && *format != "xlsx" {
		return usagef("results: --format %q: want jsonl, csv or xlsx", *format)
	}
	if *encoding != "utf-8" && (*format != "csv" || *encoding != "gb18030") {
		return usagef("results: --encoding %q: want utf-8, or gb18030 with --format csv", *encoding)
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	var refs []taskRef
	if len(pos) > 0 {
		if refs, err = resolveTasks("results", spool.NewLayout(cfg.Spool), pos); err != nil {
			return err
		}
	}
	withArchive := *archive || *batch != ""
	rows, err := report.ReadResults(cfg, *batch, withArchive)
	if err != nil {
		return err
	}
	rows, missing := onlyTasks(rows, refs)
	switch {
	case *format == "csv" && *encoding == "gb18030":
		err = report.WriteResultsGB18030CSV(env.Stdout, rows, withArchive)
	case *format == "csv":
		err = report.WriteResultsCSV(env.Stdout, rows, withArchive)
	case *format == "xlsx":
		err = report.WriteResultsXLSX(env.Stdout, rows, withArchive)
	default:
		err = report.WriteResultsJSONL(env.Stdout, rows)
	}
	if err != nil {
		return err
	}
	for _, r := range missing {
		fmt.Fprintf(env.Stderr, "%s: no such task\n", r)
	}
	if len(missing) > 0 {
		return &exitErr{code: 1}
	}
	return nil
}

// onlyTasks keeps the rows of the tasks refs name (all rows when refs is
// empty), and returns the refs that have no row.
func onlyTasks(rows []report.Row, refs []taskRef) ([]report.Row, []taskRef) {
	if len(refs) == 0 {
		return rows, nil
	}
	want := map[taskRef]bool{}
	for _, r := range refs {
		want[taskRef{lane: r.lane, id: r.id}] = true
	}
	var out []report.Row
	seen := map[taskRef]bool{}
	for _, row := range rows {
		k := taskRef{lane: row.Lane, id: row.TaskID}
		if want[k] {
			out = append(out, row)
			seen[k] = true
		}
	}
	var missing []taskRef
	for _, r := range refs {
		if !seen[taskRef{lane: r.lane, id: r.id}] {
			missing = append(missing, r)
		}
	}
	return out, missing
}
