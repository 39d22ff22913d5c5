package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/transform"

	"github.com/spoolgate/spoolgate/internal/safetext"
)

// ResultsTable is the results as a table, one header and one record a row:
// the resultColumns, then `content` (what each task asked), then `title`
// when a row has one, a `conversation` column when a row has one (web tasks sent since issue 21),
// a `resultCheck` column (verified, unchecked, or "differs: " and where)
// when a row has one, a `reasoning` column (the thinking kept apart from
// the result) when a row has one, an `artifacts` column (the generated
// files' absolute paths, one a line) when a row has one, `promptTokens`,
// `completionTokens`, `reasoningTokens`, `cachedTokens` and
// `tokensEstimated` (true for a web answer's count) when a row has a
// usage, and an `archived` column
// last when the archive was read. The cells are the exact values: each
// writer makes them safe for its format.
func ResultsTable(rows []Row, archive bool) ([]string, [][]string) {
	cols := append(slices.Clip(resultColumns), "content")
	has := func(f func(Row) bool) bool { return slices.ContainsFunc(rows, f) }
	title := has(func(r Row) bool { return r.Title != "" })
	conv := has(func(r Row) bool { return r.Conversation != "" })
	check := has(func(r Row) bool { return r.ResultCheck != "" })
	reasoning := has(func(r Row) bool { return r.Reasoning != "" })
	arts := has(func(r Row) bool { return len(r.ArtifactFiles) > 0 })
	tokens := has(func(r Row) bool { return r.PromptTokens+r.CompletionTokens > 0 })
	for _, c := range []struct {
		on   bool
		cols []string
	}{{title, []string{"title"}}, {conv, []string{"conversation"}}, {check, []string{"resultCheck"}}, {reasoning, []string{"reasoning"}},
		{arts, []string{"artifacts"}}, {tokens, []string{"promptTokens", "completionTokens", "reasoningTokens", "cachedTokens", "tokensEstimated"}}, {archive, []string{"archived"}}} {
		if c.on {
			cols = append(cols, c.cols...)
		}
	}
	ts := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.Format(time.RFC3339Nano)
	}
	recs := make([][]string, 0, len(rows))
	for _, r := range rows {
		d := ""
		if r.DurationMs != nil {
			d = strconv.FormatInt(*r.DurationMs, 10)
		}
		rec := []string{r.TaskID, string(r.Lane), r.Model, r.Batch, r.State, strconv.Itoa(r.Attempt),
			ts(r.SubmittedAt), ts(r.StartedAt), ts(r.FinishedAt), d, r.ErrorClass, r.Error, r.Output, r.Result, r.Content}
		if title {
			rec = append(rec, r.Title)
		}
		if conv {
			rec = append(rec, r.Conversation)
		}
		if check {
			rec = append(rec, strings.TrimSuffix(r.ResultCheck+": "+r.ResultDiff, ": "))
		}
		if reasoning {
			rec = append(rec, r.Reasoning)
		}
		if arts {
			rec = append(rec, strings.Join(r.ArtifactFiles, "\n"))
		}
		if tokens {
			est := ""
			if r.TokensEstimated {
				est = "true"
			}
			rec = append(rec, strconv.Itoa(r.PromptTokens), strconv.Itoa(r.CompletionTokens), strconv.Itoa(r.ReasoningTokens), strconv.Itoa(r.CachedTokens), est)
		}
		if archive {
			rec = append(rec, r.Archived)
		}
		recs = append(recs, rec)
	}
	return cols, recs
}

// WriteResultsCSV writes the table for a spreadsheet (ResultsTable's
// columns): every cell, not only the free-text ones, goes through
// safetext.CSVCell, so a batch, taskId, model, error, path or result that
// starts with = + - @ tab or CR is not run as a formula, and control
// characters are shown escaped. The exact text is in --format jsonl.
func WriteResultsCSV(w io.Writer, rows []Row, archive bool) error {
	cw := csv.NewWriter(w)
	cols, recs := ResultsTable(rows, archive)
	if err := cw.Write(cols); err != nil {
		return err
	}
	for _, rec := range recs {
		for i := range rec {
			rec[i] = safetext.CSVCell(rec[i])
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteResultsGB18030CSV is WriteResultsCSV encoded as GB18030, for the
// spreadsheet programs of a Chinese locale that read a CSV in the
// system's code page and ignore a UTF-8 byte order mark (older Excel,
// WPS). GB18030 encodes every Unicode character, so nothing is lost.
func WriteResultsGB18030CSV(w io.Writer, rows []Row, archive bool) error {
	tw := transform.NewWriter(w, simplifiedchinese.GB18030.NewEncoder())
	if err := WriteResultsCSV(tw, rows, archive); err != nil {
		return err
	}
	return tw.Close()
}

// xlsxCellMax is the most characters an Excel cell holds.
const xlsxCellMax = 32767

// WriteResultsXLSX writes the table as an Excel workbook of one sheet,
// "results": a bold, frozen header row, every cell a string (a cell that
// starts with = is text, never a formula), control characters shown
// escaped, and a cell longer than Excel allows clipped with a note that
// the whole text is in the JSONL.
func WriteResultsXLSX(w io.Writer, rows []Row, archive bool) error {
	f := excelize.NewFile()
	defer f.Close()
	const sheet = "results"
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		return err
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	bold, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		return err
	}
	cols, recs := ResultsTable(rows, archive)
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	head := make([]any, len(cols))
	for i, c := range cols {
		head[i] = excelize.Cell{StyleID: bold, Value: c}
	}
	if err := sw.SetRow("A1", head); err != nil {
		return err
	}
	for n, rec := range recs {
		row := make([]any, len(rec))
		for i, v := range rec {
			row[i] = xlsxCell(v)
		}
		cell, err := excelize.CoordinatesToCellName(1, n+2)
		if err != nil {
			return err
		}
		if err := sw.SetRow(cell, row); err != nil {
			return fmt.Errorf("results row %d: %w", n+1, err)
		}
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	return f.Write(w)
}

// xlsxClipNote ends a cell clipped to Excel's limit.
const xlsxClipNote = " (clipped at Excel's cell limit: the whole text is in the JSONL)"

func xlsxCell(v string) string {
	v = safetext.Text(v)
	if len([]rune(v)) > xlsxCellMax {
		v = safetext.ClipRunes(v, xlsxCellMax-len([]rune(xlsxClipNote))) + xlsxClipNote
	}
	return v
}
