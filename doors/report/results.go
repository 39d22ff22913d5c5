package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// resultRow is one task in the result table. Retries update a task in
// place, so a task has exactly one row; a taskId used in both lanes names
// two tasks, so it has two rows, told apart by lane. Rejected drops are
// not tasks and have no row: `spoolgate status` lists them, and each has
// its reason in <lane>/failed/NAME.error.
type Row struct {
	TaskID      string        `json:"taskId"`
	Lane        taskfile.Kind `json:"lane"`
	Model       string        `json:"model"`
	Batch       string        `json:"batch"`
	State       string        `json:"state"` // from the folder the file sits in
	Attempt     int           `json:"attempt"`
	SubmittedAt *time.Time    `json:"submittedAt"`
	StartedAt   *time.Time    `json:"startedAt"`
	FinishedAt  *time.Time    `json:"finishedAt"`
	DurationMs  *int64        `json:"durationMs"` // finishedAt-startedAt of the last attempt
	ErrorClass  string        `json:"errorClass"`
	Error       string        `json:"error"`
	Output      string        `json:"output"` // absolute path of the result file, if the task names one
	Result      string        `json:"result"`
	// Conversation (web) is the URL of the conversation the answer came
	// from (or the prompt's last send went to); absent for the others.
	Conversation string `json:"conversation,omitempty"`
	// ResultFormat and ResultMethod: how a web answer was read (markdown
	// or text; network, copy, dom or text); absent for an API answer.
	ResultFormat string `json:"resultFormat,omitempty"`
	ResultMethod string `json:"resultMethod,omitempty"`
	// ResultCheck and ResultDiff: how a web answer compares with what the
	// page showed (verified, differs with where, unchecked).
	ResultCheck string `json:"resultCheck,omitempty"`
	ResultDiff  string `json:"resultDiff,omitempty"`
	// Reasoning: a reasoning model's thinking, kept apart from result.
	Reasoning string `json:"reasoning,omitempty"`
	// PromptTokens and CompletionTokens: the answer's tokens as its API
	// reported them (the task file's usage); absent when it reported none.
	PromptTokens     int    `json:"promptTokens,omitempty"`
	CompletionTokens int    `json:"completionTokens,omitempty"`
	Archived         string `json:"archived,omitempty"` // the archive month (YYYY-MM) the file is in; "" for the lane's own folders
	// Artifacts are the files the model generated, as the task file lists
	// them; ArtifactFiles their absolute paths, in the same order.
	Artifacts     []taskfile.Artifact `json:"artifacts,omitempty"`
	ArtifactFiles []string            `json:"artifactFiles,omitempty"`
	// Content and Priority are for the console's lists (a task's name,
	// the pending order); the CSV carries the content, JSON Lines neither.
	Content  string            `json:"-"`
	Priority taskfile.Priority `json:"-"`
}

var resultColumns = []string{"taskId", "lane", "model", "batch", "state", "attempt", "submittedAt", "startedAt",
	"finishedAt", "durationMs", "errorClass", "error", "output", "result", "content"}

// writeResultsJSONL writes one JSON object per row. Every string keeps its
// exact value; characters that would drive a terminal are \u-escaped.
func WriteResultsJSONL(w io.Writer, rows []Row) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	_, err := w.Write(safetext.JSON(buf.Bytes()))
	return err
}

// readResults reads every task file of both lanes (and, with archive, of
// their archives), sorted by submittedAt then taskId. A file that does not
// decode still gets a row (its state is its folder's) with the decode
// error in `error`.
func ReadResults(cfg *config.Config, batch string, archive bool) ([]Row, error) {
	L := spool.NewLayout(cfg.Spool)
	if _, err := os.Stat(L.Root); err != nil {
		return nil, fmt.Errorf("read spool: %w", err)
	}
	var rows []Row
	for _, k := range taskfile.Kinds {
		for _, f := range resultFolders(L, k, archive) {
			dir, path := f.dir, f.path
			ents, err := fsx.ReadDir(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			} else if err != nil {
				return nil, fmt.Errorf("read spool: %w", err)
			}
			rejected := taskfile.RejectedDrops(ents)
			for _, e := range ents {
				name := e.Name()
				if !e.Type().IsRegular() || !taskfile.IsTaskFileName(name) || fsx.IsOwnTemp(name) {
					continue
				}
				base := taskfile.TrimTaskExt(name)
				if dir == taskfile.DirFailed && rejected[base] {
					continue // a rejected drop
				}
				row := Row{TaskID: base, Lane: k, State: string(taskfile.FolderState[dir]), Archived: f.month}
				if batch != "" && !mayBeOfBatch(filepath.Join(path, name), batch) {
					continue
				}
				t, err := spool.ReadTaskFile(filepath.Join(path, name))
				if err != nil {
					if errors.Is(err, fs.ErrNotExist) {
						continue // moved on meanwhile; it shows in its next folder or not at all
					}
					row.Error = err.Error()
				} else {
					fillRow(&row, L, t)
					row.ArtifactFiles = artifactFiles(L.ArtifactBase(path, t), t)
				}
				if batch != "" && row.Batch != batch {
					continue
				}
				rows = append(rows, row)
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i].SubmittedAt, rows[j].SubmittedAt
		switch {
		case a == nil && b != nil:
			return false
		case a != nil && b == nil:
			return true
		case a != nil && !a.Equal(*b):
			return a.Before(*b)
		}
		if rows[i].TaskID != rows[j].TaskID {
			return rows[i].TaskID < rows[j].TaskID
		}
		return rows[i].Lane < rows[j].Lane
	})
	return rows, nil
}

func fillRow(r *Row, L spool.Layout, t *taskfile.Task) {
	if t.TaskID != "" {
		r.TaskID = t.TaskID
	}
	r.Model, r.Batch, r.Attempt = t.Model, t.Batch, t.Attempt
	r.Content, r.Priority = t.Content, t.Priority
	r.ErrorClass, r.Error, r.Result = string(t.ErrorClass), t.Error, t.Result
	r.ResultFormat, r.ResultMethod = t.ResultFormat, t.ResultMethod
	r.ResultCheck, r.ResultDiff = t.ResultCheck, t.ResultDiff
	r.Reasoning = t.Reasoning
	r.PromptTokens, r.CompletionTokens = t.Usage.PromptTokens, t.Usage.CompletionTokens
	r.Artifacts = t.Artifacts
	r.SubmittedAt, r.StartedAt, r.FinishedAt = TimeOrNil(t.SubmittedAt), TimeOrNil(t.StartedAt), TimeOrNil(t.FinishedAt)
	if r.StartedAt != nil && r.FinishedAt != nil && !r.FinishedAt.Before(*r.StartedAt) {
		ms := r.FinishedAt.Sub(*r.StartedAt).Milliseconds()
		r.DurationMs = &ms
	}
	if t.Output != "" {
		r.Output = filepath.Join(L.Output(), filepath.FromSlash(t.Output))
	}
	if d := t.LastDelivery(); d != nil && d.Conversation != "" {
		r.Conversation = d.Conversation
	} else if t.Send != nil {
		r.Conversation = t.Send.Conversation
	}
}

// writeResultsCSV writes the table for a spreadsheet: every cell, not only
// the free-text ones, goes through safetext.CSVCell, so a batch, taskId,
// model, error, path or result that starts with = + - @ tab or CR is not
// run as a formula, and control characters are shown escaped. The exact
// text is in --format jsonl.
// writeResultsCSV writes rows under resultColumns (the task's content
// after its result, so a spreadsheet shows what was asked beside the
// answer; JSON Lines leaves it out, a program has the task file), then a
// `conversation`
// column when a row has one (web tasks sent since issue 21), a
// `resultCheck` column (verified, unchecked, or "differs: " and where)
// when a row has one, a `reasoning` column (the thinking kept apart from
// the result) when a row has one, an `artifacts` column (the generated
// files' absolute paths, one a line) when a row has one,
// `promptTokens` and `completionTokens` when a row has a usage, and an
// `archived` column last when the archive was read.
func WriteResultsCSV(w io.Writer, rows []Row, archive bool) error {
	cw := csv.NewWriter(w)
	cols := resultColumns
	conv := slices.ContainsFunc(rows, func(r Row) bool { return r.Conversation != "" })
	if conv {
		cols = append(slices.Clip(cols), "conversation")
	}
	check := slices.ContainsFunc(rows, func(r Row) bool { return r.ResultCheck != "" })
	if check {
		cols = append(slices.Clip(cols), "resultCheck")
	}
	reasoning := slices.ContainsFunc(rows, func(r Row) bool { return r.Reasoning != "" })
	if reasoning {
		cols = append(slices.Clip(cols), "reasoning")
	}
	arts := slices.ContainsFunc(rows, func(r Row) bool { return len(r.ArtifactFiles) > 0 })
	if arts {
		cols = append(slices.Clip(cols), "artifacts")
	}
	tokens := slices.ContainsFunc(rows, func(r Row) bool { return r.PromptTokens+r.CompletionTokens > 0 })
	if tokens {
		cols = append(slices.Clip(cols), "promptTokens", "completionTokens")
	}
	if archive {
		cols = append(slices.Clip(cols), "archived")
	}
	if err := cw.Write(cols); err != nil {
		return err
	}
	ts := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.Format(time.RFC3339Nano)
	}
	for _, r := range rows {
		d := ""
		if r.DurationMs != nil {
			d = strconv.FormatInt(*r.DurationMs, 10)
		}
		rec := []string{r.TaskID, string(r.Lane), r.Model, r.Batch, r.State, strconv.Itoa(r.Attempt),
			ts(r.SubmittedAt), ts(r.StartedAt), ts(r.FinishedAt), d, r.ErrorClass, r.Error, r.Output, r.Result, r.Content}
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
			rec = append(rec, strconv.Itoa(r.PromptTokens), strconv.Itoa(r.CompletionTokens))
		}
		if archive {
			rec = append(rec, r.Archived)
		}
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

// artifactFiles are t's artifacts' absolute paths, base the folder their
// paths are relative to (spool.Layout.ArtifactBase).
func artifactFiles(base string, t *taskfile.Task) []string {
	var out []string
	for _, a := range t.Artifacts {
		out = append(out, filepath.Join(base, filepath.FromSlash(a.Path)))
	}
	return out
}

// TimeOrNil is a row's time: v in UTC, nil for the zero time (JSON null,
// an empty cell).
func TimeOrNil(v time.Time) *time.Time {
	if v.IsZero() {
		return nil
	}
	v = v.UTC()
	return &v
}
