package apimodel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/attach"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// chatRequest is the chat-completions body spoolgate sends.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Stream   bool          `json:"stream"`
	// StreamOptions asks for the token counts on the stream's last
	// chunk (OpenAI's include_usage): the task's usage.
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	Temperature   *float64       `json:"temperature,omitempty"`
	// One of the two carries the model's maxTokens, per its maxTokensField.
	MaxTokens           *int `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int `json:"max_completion_tokens,omitempty"`
	// A task's own sampling (its model's requestFields allow them).
	TopP            *float64 `json:"top_p,omitempty"`
	Stop            []string `json:"stop,omitempty"`
	Seed            *int     `json:"seed,omitempty"`
	ReasoningEffort string   `json:"reasoning_effort,omitempty"`
	// ResponseFormat carries a task's schema to a model whose endpoint
	// takes it (schemaMode: native); see responseFormat.
	ResponseFormat map[string]any `json:"response_format,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a string, or []contentPart for a message with images
	// (attachments.go).
	Content any `json:"content"`
}

// maxErrorBody is how much of an error answer is read: enough for any
// real message, and the key is masked in all of it before it is cut.
const maxErrorBody = 64 << 10

// request builds the body: a system message with the prompt unless it is
// empty or the model needs an empty prompt (reasoning models parrot it
// instead of reasoning), then one user message with the content and the
// task's attachments (files, read and checked by loadAttachments).
func (m *model) request(t *taskfile.Task, files []attach.Loaded) *chatRequest {
	r := &chatRequest{Model: m.cfg.Model, Stream: true, StreamOptions: &streamOptions{IncludeUsage: true}, Temperature: m.cfg.Temperature}
	if t.Prompt != "" && !m.cfg.NeedEmptyPrompt {
		r.Messages = append(r.Messages, chatMessage{Role: "system", Content: t.Prompt})
	}
	r.Messages = append(r.Messages, chatMessage{Role: "user", Content: userContent(t.Content, files)})
	n := m.cfg.MaxTokens
	if s := t.Sampling; s != nil {
		// Intake took only the fields the model allows; the model's own
		// requestFields are checked again, as a task file edited since
		// would not be.
		if s.Temperature != nil && m.cfg.AllowsField("temperature") {
			r.Temperature = s.Temperature
		}
		if s.TopP != nil && m.cfg.AllowsField("topP") {
			r.TopP = s.TopP
		}
		if s.MaxTokens != nil && m.cfg.AllowsField("maxTokens") {
			n = *s.MaxTokens
		}
		if len(s.Stop) > 0 && m.cfg.AllowsField("stop") {
			r.Stop = s.Stop
		}
		if s.Seed != nil && m.cfg.AllowsField("seed") {
			r.Seed = s.Seed
		}
		if s.ReasoningEffort != "" && m.cfg.AllowsField("reasoningEffort") {
			r.ReasoningEffort = s.ReasoningEffort
		}
	}
	if m.cfg.NativeSchema() && t.Schema != "" {
		r.ResponseFormat = responseFormat(t.Schema)
	}
	if n > 0 {
		if m.cfg.MaxTokensField == config.MaxCompletionTokens {
			r.MaxCompletionTokens = &n
		} else {
			r.MaxTokens = &n
		}
	}
	return r
}

// call sends the request and reads the answer. An HTTP error status comes
// back as a classed *attempt.TaskError with the server's message; a failure
// on the way (connection, timeout) as the transport's error, for classify.
func (m *model) call(ctx context.Context, hc *http.Client, body *chatRequest, job *attempt.Job) (answer, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return answer{}, fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint, bytes.NewReader(b))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream, application/json")
	req.Header.Set("User-Agent", "spoolgate")
	if m.key != "" {
		req.Header.Set("Authorization", "Bearer "+m.key)
	}
	for k, v := range m.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if rerr != nil && len(data) == 0 && ctx.Err() != nil {
			return answer{}, rerr
		}
		e := parseErrorBody(data)
		e.Status = resp.StatusCode
		return answer{}, m.failure(e, fmt.Sprintf("HTTP %d", resp.StatusCode), resp.Header)
	}
	job.SetStage("receiving answer")
	return m.readAnswer(resp, job)
}

// responseFormat is a task's schema as OpenAI's response_format:
// json_object for `schema: object`, else json_schema with the schema as
// written. strict is false: OpenAI's strict mode takes only schemas with
// every property required and no others allowed, and would refuse the
// rest with a 400, while spoolgate checks every answer against the whole
// schema anyway (lanes/schema.go).
func responseFormat(s taskfile.SchemaText) map[string]any {
	text := strings.TrimSpace(string(s))
	if text == taskfile.SchemaObject {
		return map[string]any{"type": "json_object"}
	}
	if !json.Valid([]byte(text)) {
		return nil // edited after intake: the answer's check fails it with the reason
	}
	return map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "answer", "schema": json.RawMessage(text), "strict": false}}
}
