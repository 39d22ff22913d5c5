// Package taskfile is the task file format: kinds, states, error classes,
// the Task codec, task ids, priorities and the folder names of a lane. It
// does no I/O and imports nothing of this module, so every layer may
// import it (as river's rivertype is to river).
package taskfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Kind is the kind of model a task runs on, and the lane that runs it.
type Kind string

const (
	KindWeb Kind = "web"
	KindAPI Kind = "api"
)

// Kinds lists the lanes in a fixed order.
var Kinds = []Kind{KindWeb, KindAPI}

// Valid reports whether k names a lane.
func (k Kind) Valid() bool { return k == KindWeb || k == KindAPI }

// State is a task's lifecycle state.
type State string

const (
	StatePending  State = "pending"
	StateRunning  State = "running"
	StateSuccess  State = "success"
	StateFailed   State = "failed"
	StateCanceled State = "canceled"
)

// Final reports whether s is one of the three end states.
func (s State) Final() bool {
	return s == StateSuccess || s == StateFailed || s == StateCanceled
}

// ErrorClass says why a task failed; the lanes branch on it to decide
// whether to retry.
type ErrorClass string

const (
	ClassInvalid     ErrorClass = "invalid"
	ClassDuplicate   ErrorClass = "duplicate"
	ClassTransient   ErrorClass = "transient"
	ClassPermanent   ErrorClass = "permanent"
	ClassStale       ErrorClass = "stale"
	ClassAccount     ErrorClass = "account"
	ClassEnvironment ErrorClass = "environment"
	ClassCanceled    ErrorClass = "canceled"
)

// MaxTaskSize is the largest drop spoolgate takes: it guards intake (and
// submit) only.
const MaxTaskSize = 1 << 20

// MaxRecordSize is the largest of spoolgate's own task files (pending,
// running, done, failed, canceled, archive) it reads: far past MaxTaskSize,
// because a record holds the answer, and an answer paid for must stay
// readable whatever its size. The bound only keeps a file that is not a
// record at all (a stray disk image) from taking the memory.
const MaxRecordSize = 256 << 20

// Task is one task file. Field order here is the order on disk: what the
// submitter wrote first, then what spoolgate writes.
type Task struct {
	TaskID    string `yaml:"taskId"`
	ModelKind Kind   `yaml:"modelKind,omitempty"`
	Model     string `yaml:"model"`
	Batch     string `yaml:"batch,omitempty"`
	// Title is the task's name for people (the console's lists, results):
	// one line, at most 200 characters; without one, the first words of
	// its content name it.
	Title    string   `yaml:"title,omitempty"`
	Priority Priority `yaml:"priority,omitempty"`
	Output   string   `yaml:"output,omitempty"`
	Prompt   string   `yaml:"prompt,omitempty"`
	Content  string   `yaml:"content"`
	// Attachments are files the task carries to the model: paths relative
	// to the task file's folder or the spool's files/, or absolute under a
	// root of the config's attachments.roots (attachments.go).
	Attachments []string `yaml:"attachments,omitempty"`
	// Schema asks for a JSON answer: a JSON Schema, or "object" for any
	// JSON object (schema.go). The answer's JSON is checked and kept as
	// the result, with resultFormat json.
	Schema SchemaText `yaml:"schema,omitempty"`
	// Sampling is the task's own sampling settings for an API model that
	// allows them (sampling.go).
	Sampling *Sampling `yaml:"sampling,omitempty"`

	State       State      `yaml:"state,omitempty"`
	Attempt     int        `yaml:"attempt"`
	SubmittedAt time.Time  `yaml:"submittedAt,omitempty"`
	NotBefore   time.Time  `yaml:"notBefore,omitempty"`
	StartedAt   time.Time  `yaml:"startedAt,omitempty"`
	HeartbeatAt time.Time  `yaml:"heartbeatAt,omitempty"`
	FinishedAt  time.Time  `yaml:"finishedAt,omitempty"`
	Owner       string     `yaml:"owner,omitempty"`
	Account     string     `yaml:"account,omitempty"`   // the web session's account its last attempt ran on
	DoorToken   string     `yaml:"doorToken,omitempty"` // the front door's token that submitted it (spool/owner.go: kept only sealed)
	BrowserPID  int        `yaml:"browserPid,omitempty"`
	Error       string     `yaml:"error,omitempty"`
	ErrorClass  ErrorClass `yaml:"errorClass,omitempty"`
	// AttachmentsChecked is what intake found of each attachment (name,
	// type, size, SHA-256): a daemon's field, never the submitter's.
	AttachmentsChecked []Attachment `yaml:"attachmentsChecked,omitempty"`
	// Send is a web task's last send of its prompt (sendrecord.go): what
	// lets a later attempt reattach instead of sending again.
	Send *SendRecord `yaml:"send,omitempty"`
	// Attempts is the history of the task's attempts (attempts.go).
	Attempts []AttemptRecord `yaml:"attempts,omitempty"`
	// ResultFormat and ResultMethod say how a web answer was read:
	// markdown or text; network, copy, dom or text (README: "Reading the
	// answer"). Empty for an API answer, which is the model's own text.
	ResultFormat string `yaml:"resultFormat,omitempty"`
	ResultMethod string `yaml:"resultMethod,omitempty"`
	// ResultCheck says how a web answer compares with the answer the page
	// showed (README: "Every result checked"): verified, differs (with
	// ResultDiff, the first difference) or unchecked.
	ResultCheck string `yaml:"resultCheck,omitempty"`
	ResultDiff  string `yaml:"resultDiff,omitempty"`
	// ResultFallback names the read methods tried before ResultMethod
	// that did not deliver ("network", "network,copy"): the site's first
	// method fell back on this answer (the task's log says why). A key
	// that falls back on every answer is named by status.
	ResultFallback string `yaml:"resultFallback,omitempty"`
	// Usage is the tokens of the successful attempt as the API reported
	// them, or, for a web answer (whose page shows none), counted with the
	// model's tokenizer and marked estimated; absent when there are none.
	// Each attempt's own is in Attempts.
	Usage  Usage  `yaml:"usage,omitempty"`
	Result string `yaml:"result,omitempty"`
	// Reasoning is a reasoning model's thinking, told apart from the
	// answer (Result), as Markdown: the page's thinking block, a
	// `reasoning` field of its stream, a leading <think>…</think> in the
	// answer, or an API's reasoning_content. Empty when the model shows
	// none, or when its model sets keepReasoning: false. Never part of
	// Result.
	Reasoning string `yaml:"reasoning,omitempty"`
	// Artifacts are the files the model generated with the answer,
	// saved beside it (artifacts.go).
	Artifacts []Artifact `yaml:"artifacts,omitempty"`
	// Wrote lists the files this task has written, or was about to
	// write, under <spool>/output/ (its output: file, the artifacts
	// beside it), each with the SHA-256 of its bytes: a daemon's field.
	// A file there is never replaced, except by the task that wrote it,
	// and only while it still holds bytes listed here (spool/output.go).
	Wrote []Written `yaml:"wrote,omitempty"`
}

// Written is one file a task wrote under <spool>/output/.
type Written struct {
	Path   string `yaml:"path" json:"path"`     // relative to output/, with /
	SHA256 string `yaml:"sha256" json:"sha256"` // hex SHA-256 of its bytes
}

// Owns reports whether the task wrote path (relative to output/, with
// /) with the bytes whose SHA-256 is sum.
func (t *Task) Owns(path, sum string) bool {
	for _, w := range t.Wrote {
		if w.Path == path && w.SHA256 == sum {
			return true
		}
	}
	return false
}

// Clone returns a copy that shares nothing mutable with t.
func (t *Task) Clone() *Task {
	c := *t
	if t.Send != nil {
		s := *t.Send
		c.Send = &s
	}
	c.Attempts = append([]AttemptRecord(nil), t.Attempts...)
	c.Artifacts = cloneArtifacts(t.Artifacts)
	c.Attachments = append([]string(nil), t.Attachments...)
	c.AttachmentsChecked = append([]Attachment(nil), t.AttachmentsChecked...)
	c.Wrote = append([]Written(nil), t.Wrote...)
	return &c
}

// ResetForIntake clears every field that spoolgate writes, so a file moved
// from failed/ back to incoming/ runs again as new, and turns CRLF in the
// prompt and content into LF.
func (t *Task) ResetForIntake() {
	*t = Task{
		TaskID: t.TaskID, ModelKind: t.ModelKind, Model: t.Model, Batch: t.Batch, Title: t.Title, Priority: t.Priority,
		Output: t.Output, Prompt: normalizeNewlines(t.Prompt), Content: normalizeNewlines(t.Content),
		Attachments: t.Attachments, Schema: t.Schema, Sampling: t.Sampling,
	}
}

// DropDaemonFields clears every field a daemon writes (the send record,
// attempts, result and outcome, owner, times) of a record that failed
// its seal, keeping what the submitter wrote and when it was submitted:
// it runs as the fresh task those fields describe. It reports whether
// anything was dropped.
func (t *Task) DropDaemonFields() bool {
	was := *t
	t.ResetForIntake()
	t.SubmittedAt = was.SubmittedAt
	if was.State != "" {
		t.State = StatePending
	}
	return !reflect.DeepEqual(was, *t)
}

// ErrTooLarge is returned for a task file over MaxTaskSize.
var ErrTooLarge = errors.New("file is larger than 1 MiB")

// DecodeTask parses one task file strictly: unknown fields, a second
// document, text that is not UTF-8 (or UTF-16 with a BOM, converted; see
// textOf) and files over MaxTaskSize are errors. A UTF-8 BOM and CRLF line
// ends are accepted. Error messages are one line.
func DecodeTask(data []byte) (*Task, error) {
	if len(data) > MaxTaskSize {
		return nil, ErrTooLarge
	}
	return decode(data)
}

// DecodeRecord is DecodeTask for spoolgate's own task files, which
// MaxRecordSize bounds instead of MaxTaskSize: a record with a large
// result is as readable as any other.
func DecodeRecord(data []byte) (*Task, error) {
	if len(data) > MaxRecordSize {
		return nil, fmt.Errorf("file is %d bytes, over the %d byte limit of a task record", len(data), MaxRecordSize)
	}
	return decode(data)
}

func decode(data []byte) (*Task, error) {
	data, err := textOf(data)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("file is empty")
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var t Task
	if err := dec.Decode(&t); err != nil {
		return nil, YAMLError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		if err != nil {
			return nil, YAMLError(err)
		}
		return nil, fmt.Errorf("yaml: line %d: a second document: one task per file", extra.Line)
	}
	return &t, nil
}

// taskTypeName is how yaml.v3 names Task in its messages ("field x not
// found in type taskfile.Task"); taken from the type itself, so a move or
// rename of the package cannot make the rewrite below silently stop
// matching.
var taskTypeName = "in type " + reflect.TypeFor[Task]().String()

// YAMLError folds a yaml.v3 error (which may list several lines) into one
// line, without the Go type name of Task.
func YAMLError(err error) error {
	s := strings.TrimSpace(err.Error())
	s = strings.ReplaceAll(s, "\n ", ";")
	s = strings.ReplaceAll(s, "\n", "; ")
	s = strings.ReplaceAll(s, "unmarshal errors:;", "")
	s = strings.ReplaceAll(s, taskTypeName, "(unknown field)")
	return errors.New(OneLine(s))
}

// OneLine folds any run of white space (line breaks included) into one
// space: every reason spoolgate writes into a task file or NAME.error is
// one line.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Encode renders the task as YAML in its stable field order.
func (t *Task) Encode() ([]byte, error) {
	c := t.rounded()
	if b, ok := appendTask(make([]byte, 0, 512+len(c.Prompt)+len(c.Content)+len(c.Result)), c); ok {
		return b, nil
	}
	return c.encodeYAML()
}

// rounded is a copy of the task with its times in UTC and rounded to
// milliseconds, so files stay readable; the protocol needs no more.
func (t *Task) rounded() *Task {
	c := *t
	for _, p := range []*time.Time{&c.SubmittedAt, &c.NotBefore, &c.StartedAt, &c.HeartbeatAt, &c.FinishedAt} {
		if !p.IsZero() {
			*p = p.UTC().Truncate(time.Millisecond)
		}
	}
	c.Attempts = roundAttempts(c.Attempts)
	if c.Send != nil {
		s := *c.Send
		s.SendingAt, s.SentAt = msTime(s.SendingAt), msTime(s.SentAt)
		c.Send = &s
	}
	return &c
}

// encodeYAML is Encode by yaml.v3 itself, for a task (already rounded)
// that appendTask does not write.
func (c Task) encodeYAML() ([]byte, error) {
	id := c.TaskID
	back := standIns(c.textFields()) // emoji written as themselves
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&c); err != nil {
		return nil, fmt.Errorf("encode task %s: %w", id, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode task %s: %w", id, err)
	}
	return restoreStandIns(buf.Bytes(), back), nil
}

// clip shortens user text quoted in a reason so a reason stays one line.
func Clip(s string) string {
	if len(s) > 80 {
		cut := 80
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // never split a character
		}
		s = s[:cut] + "…"
	}
	return OneLine(s)
}

// Usage is an answer's token counts, as its API reported them (OpenAI's
// usage: reasoning tokens are part of the completion's, cached ones part
// of the prompt's), or as spoolgate counted them (Estimated: a web page
// reports none).
type Usage struct {
	PromptTokens     int  `yaml:"promptTokens,omitempty"`
	CompletionTokens int  `yaml:"completionTokens,omitempty"`
	ReasoningTokens  int  `yaml:"reasoningTokens,omitempty"` // completion_tokens_details.reasoning_tokens
	CachedTokens     int  `yaml:"cachedTokens,omitempty"`    // prompt_tokens_details.cached_tokens
	Estimated        bool `yaml:"estimated,omitempty"`       // counted by spoolgate's tokenizer, not reported
}

// Add is u with v's counts added; the sum is estimated if either is.
func (u Usage) Add(v Usage) Usage {
	return Usage{PromptTokens: u.PromptTokens + v.PromptTokens, CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		ReasoningTokens: u.ReasoningTokens + v.ReasoningTokens, CachedTokens: u.CachedTokens + v.CachedTokens, Estimated: u.Estimated || v.Estimated}
}

// IsZero makes a Usage that says nothing left out of the file.
func (u Usage) IsZero() bool { return u == Usage{} }
