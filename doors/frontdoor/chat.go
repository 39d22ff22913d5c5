package frontdoor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// chatRequest is what the door reads of an OpenAI chat-completions
// request; every other field is refused by name (checkFields).
type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []chatMessage   `json:"messages"`
	Stream         bool            `json:"stream"`
	StreamOptions  *streamOptions  `json:"stream_options"`
	N              *int            `json:"n"`
	Tools          json.RawMessage `json:"tools"`
	Functions      json.RawMessage `json:"functions"`
	ResponseFormat *responseFormat `json:"response_format"`
}

// responseFormat is OpenAI's response_format: text, json_object, or
// json_schema with its schema (name and strict are the client's).
type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	} `json:"json_schema"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// chatTask is a parsed request: the task's fields and how to answer.
type chatTask struct {
	Model, Prompt, Content string
	Schema                 taskfile.SchemaText // response_format: json_object or json_schema
	Sampling               *taskfile.Sampling  // the sampling fields the request set
	samplingNames          map[string]string   // each set field's OpenAI name, by its task name
	Stream, Usage          bool
}

// parseChat reads a chat-completions body into a task: the system (or
// developer) messages before the user's become the prompt, the one user
// message the content. A conversation with earlier turns (an assistant
// or tool message, a second user message) is refused: tasks are one turn.
func parseChat(body []byte) (chatTask, *apiError) {
	var req chatRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return chatTask{}, badRequest("", "the body is not a chat-completions JSON object: "+err.Error())
	}
	if dec.More() {
		return chatTask{}, badRequest("", "the body has more than one JSON value")
	}
	if aerr := checkFields(body); aerr != nil {
		return chatTask{}, aerr
	}
	sampling, names, aerr := samplingOf(body)
	if aerr != nil {
		return chatTask{}, aerr
	}
	if req.Model == "" {
		return chatTask{}, badRequest("model", "missing: the name of one of this spoolgate's models (GET /v1/models)")
	}
	if req.N != nil && *req.N != 1 {
		return chatTask{}, badRequest("n", "only n: 1 is supported: a task has one answer")
	}
	if len(req.Tools) > 0 && string(req.Tools) != "null" && string(req.Tools) != "[]" {
		return chatTask{}, badRequest("tools", "tools are not supported: a task is one prompt and one answer")
	}
	if len(req.Functions) > 0 && string(req.Functions) != "null" && string(req.Functions) != "[]" {
		return chatTask{}, badRequest("functions", "functions are not supported: a task is one prompt and one answer")
	}
	if len(req.Messages) == 0 {
		return chatTask{}, badRequest("messages", "missing: a system message (optional) and one user message")
	}
	ct := chatTask{Model: req.Model, Stream: req.Stream, Usage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage, Sampling: sampling, samplingNames: names}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "text":
		case "json_object":
			ct.Schema = taskfile.SchemaObject
		case "json_schema":
			if rf.JSONSchema == nil || len(rf.JSONSchema.Schema) == 0 || string(rf.JSONSchema.Schema) == "null" {
				return chatTask{}, badRequest("response_format.json_schema.schema", "missing: the JSON Schema the answer must match")
			}
			ct.Schema = taskfile.SchemaText(rf.JSONSchema.Schema)
			if _, err := taskfile.CompileSchema(ct.Schema); err != nil {
				return chatTask{}, badRequest("response_format.json_schema.schema", err.Error())
			}
		default:
			return chatTask{}, badRequest("response_format.type", fmt.Sprintf("%q: want text, json_object or json_schema", rf.Type))
		}
	}
	var prompts []string
	user := -1
	for i, m := range req.Messages {
		param := fmt.Sprintf("messages[%d]", i)
		text, aerr := messageText(m.Content, param+".content")
		if aerr != nil {
			return chatTask{}, aerr
		}
		switch m.Role {
		case "system", "developer":
			if user >= 0 {
				return chatTask{}, badRequest(param, "a system message after the user's: multi-turn conversations are not supported yet; send the system message first and one user message")
			}
			prompts = append(prompts, text)
		case "user":
			if user >= 0 {
				return chatTask{}, badRequest(param, "a second user message: multi-turn conversations are not supported yet (a task is one turn); send one user message")
			}
			user = i
			ct.Content = text
		case "assistant", "tool", "function":
			return chatTask{}, badRequest(param, "an earlier "+m.Role+" turn: multi-turn conversations are not supported yet (a task is one turn); send a system message and one user message")
		default:
			return chatTask{}, badRequest(param+".role", fmt.Sprintf("%q: want system, developer or user", m.Role))
		}
	}
	if user < 0 {
		return chatTask{}, badRequest("messages", "no user message: the last message must be the user's")
	}
	ct.Prompt = strings.Join(prompts, "\n\n")
	return ct, nil
}

// messageText is a message's content: a string, or an array of text parts.
func messageText(raw json.RawMessage, param string) (string, *apiError) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", badRequest(param, "missing")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badRequest(param, "want a string or an array of text parts")
	}
	var b strings.Builder
	for i, p := range parts {
		if p.Type != "text" || p.Text == nil {
			return "", badRequest(fmt.Sprintf("%s[%d]", param, i), fmt.Sprintf("a %q part: only text parts are supported", p.Type))
		}
		b.WriteString(*p.Text)
	}
	return b.String(), nil
}

// chat is POST /v1/chat/completions: the request becomes a durable task
// in its model's lane before anything is answered, then the answer comes
// when the task ends, whole or streamed.
func (d *Door) chat(w http.ResponseWriter, r *http.Request) {
	tk := tokenOf(r.Context())
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, bodyError(err))
		return
	}
	ct, aerr := parseChat(body)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if !d.hasModel(ct.Model) {
		writeError(w, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "model", Code: "model_not_found",
			Msg: fmt.Sprintf("the model %q does not exist (GET /v1/models lists this spoolgate's models)", ct.Model)})
		return
	}
	if !tk.cfg.Allows(ct.Model) {
		writeError(w, &apiError{Status: http.StatusForbidden, Type: "permission_error", Param: "model", Code: "model_not_allowed",
			Msg: fmt.Sprintf("token %s may not use the model %q", tk.name, ct.Model)})
		return
	}
	if m, ok := d.cfg.Model(ct.Model); ok {
		for _, f := range ct.Sampling.Set() {
			if !m.AllowsField(f) {
				name := ct.samplingNames[f]
				writeError(w, badRequest(name, fmt.Sprintf("%s is not honoured for the model %q: its config's requestFields do not list %s (a task runs with its model's settings)", name, ct.Model, f)))
				return
			}
		}
	}
	t := &taskfile.Task{Model: ct.Model, Prompt: ct.Prompt, Content: ct.Content, Schema: ct.Schema, Sampling: ct.Sampling, Batch: batchOf(r, tk)}
	if key := r.Header.Get("Idempotency-Key"); key != "" {
		t.TaskID = keyedID(tk, key)
	} else {
		t.TaskID = newID(tk)
	}
	lane, aerr := d.check(t)
	if aerr != nil {
		aerr.Param = "messages"
		writeError(w, aerr)
		return
	}
	t.DoorToken = tk.name // after check, which clears what a daemon writes
	s, aerr := d.submit(lane, t)
	if aerr != nil {
		if aerr.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", retryAfter)
		}
		writeError(w, aerr)
		return
	}
	if s.at.dir == taskfile.DirFailed && s.at.reject != "" {
		writeError(w, badRequest("messages", "the task was refused: "+s.at.reject))
		return
	}
	w.Header().Set("X-Spoolgate-Task", string(lane)+"/"+t.TaskID)
	// The answer may take minutes: no write deadline for this request.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	if ct.Stream {
		d.stream(w, r, s, ct)
		return
	}
	fin, err := d.waitFinal(r.Context(), lane, t.TaskID, time.Time{}, 0, nil)
	if err != nil {
		d.answerErr(w, err)
		return
	}
	if aerr := outcome(fin); aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, completion(fin.task, ct.Model))
}

// answerErr answers a wait that ended without the task's end.
func (d *Door) answerErr(w http.ResponseWriter, err error) {
	if errorsIsCtx(err) {
		return // the client left, or the daemon stops: the task goes on
	}
	d.log.Error("wait", "err", err)
	writeError(w, internalError(err.Error()))
}

// outcome is nil for a task that succeeded, else the client's error.
func outcome(w where) *apiError {
	switch {
	case w.reject != "":
		return badRequest("messages", "the task was refused: "+w.reject)
	case w.task == nil:
		return internalError("the task has no record")
	case w.dir == taskfile.DirDone && w.task.State == taskfile.StateSuccess:
		return nil
	case w.dir == taskfile.DirDone:
		// In done/ without a state: a record no daemon of this
		// installation wrote (its fields were dropped when read).
		return internalError("task " + w.task.TaskID + ": its record in done/ was not written by this installation")
	}
	return failedError(w.task, taskfile.FolderState[w.dir])
}

func batchOf(r *http.Request, tk *token) string {
	if b := r.Header.Get("X-Spoolgate-Batch"); b != "" {
		return b
	}
	return tk.name
}

func (d *Door) hasModel(name string) bool {
	for _, m := range d.cfg.Models {
		if m.Name == name {
			return true
		}
	}
	return false
}

// completionID is the chat.completion id of a task.
func completionID(t *taskfile.Task) string { return "chatcmpl-" + t.TaskID }

func created(t *taskfile.Task) int64 {
	if !t.SubmittedAt.IsZero() {
		return t.SubmittedAt.Unix()
	}
	return time.Now().Unix()
}

func completion(t *taskfile.Task, model string) map[string]any {
	return map[string]any{
		"id": completionID(t), "object": "chat.completion", "created": created(t), "model": model,
		"system_fingerprint": nil,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "logprobs": nil,
			"message": map[string]any{"role": "assistant", "content": t.Result, "refusal": nil}}},
		"usage": usage(t),
	}
}

// usage is the task's tokens in OpenAI's shape, details included: as its
// API reported them, or, for a web model (whose page shows no counts),
// as spoolgate's tokenizer counted them, with "estimated": true, a field
// of spoolgate's that clients read past; zeros where there are none.
func usage(t *taskfile.Task) map[string]any {
	u := t.Usage
	m := map[string]any{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.PromptTokens + u.CompletionTokens,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CachedTokens},
		"completion_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens}}
	if u.Estimated {
		m["estimated"] = true
	}
	return m
}

// models is GET /v1/models: the models this token may use.
func (d *Door) models(w http.ResponseWriter, r *http.Request) {
	tk := tokenOf(r.Context())
	data := []any{}
	for _, m := range d.cfg.Models {
		if tk.cfg.Allows(m.Name) {
			data = append(data, map[string]any{"id": m.Name, "object": "model", "created": 0, "owned_by": "spoolgate-" + string(m.Kind)})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}
