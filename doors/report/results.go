package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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
	Title       string        `json:"title,omitempty"` // the task's title:, when it has one
	State       string        `json:"state"`           // from the folder the file sits in
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
	// PromptTokens, CompletionTokens and their reasoning and cached
	// parts: the answer's tokens as its API reported them (the task file's
	// usage), or estimated (TokensEstimated: a web answer, counted by
	// spoolgate's tokenizer); absent when there are none.
	PromptTokens     int    `json:"promptTokens,omitempty"`
	CompletionTokens int    `json:"completionTokens,omitempty"`
	ReasoningTokens  int    `json:"reasoningTokens,omitempty"`
	CachedTokens     int    `json:"cachedTokens,omitempty"`
	TokensEstimated  bool   `json:"tokensEstimated,omitempty"`
	Archived         string `json:"archived,omitempty"` // the archive month (YYYY-MM) the file is in; "" for the lane's own folders
	// Artifacts are the files the model generated, as the task file lists
	// them; ArtifactFiles their absolute paths, in the same order.
	Artifacts     []taskfile.Artifact `json:"artifacts,omitempty"`
	ArtifactFiles []string            `json:"artifactFiles,omitempty"`
	// Content is the task's text as submitted (a chained task's as filled
	// from its parents), so a results table says what each answer answers.
	Content string `json:"content"`
	// Priority is for the console's lists (the pending order); the result
	// files leave it out.
	Priority taskfile.Priority `json:"-"`
}

var resultColumns = []string{"taskId", "lane", "model", "batch", "state", "attempt", "submittedAt", "startedAt",
	"finishedAt", "durationMs", "errorClass", "error", "output", "result"}

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
	r.Content, r.Title, r.Priority = t.Content, t.Title, t.Priority
	r.ErrorClass, r.Error, r.Result = string(t.ErrorClass), t.Error, t.Result
	r.ResultFormat, r.ResultMethod = t.ResultFormat, t.ResultMethod
	r.ResultCheck, r.ResultDiff = t.ResultCheck, t.ResultDiff
	r.Reasoning = t.Reasoning
	u := t.Usage
	r.PromptTokens, r.CompletionTokens, r.ReasoningTokens, r.CachedTokens, r.TokensEstimated = u.PromptTokens, u.CompletionTokens, u.ReasoningTokens, u.CachedTokens, u.Estimated
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
