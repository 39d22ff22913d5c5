// Package apimodel runs tasks on API models: any OpenAI-compatible
// chat-completions endpoint, through the official openai-go client with its
// own retries off, since the API lane owns retries, backoff and Retry-After.
package apimodel

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/spool"
)

// ErrNoKey is returned by New when an api model's apiKeyEnv names a
// variable that is unset or empty.
var ErrNoKey = errors.New("api key variable is unset or empty")

// Executor calls API models. It implements lanes.Executor and is safe for
// concurrent use: the API lane runs up to five attempts at once.
type Executor struct {
	transport *http.Transport
	models    map[string]*model
}

// model is one api model's client, built once at start.
type model struct {
	cfg spool.ModelConfig
	key string // never logged, never in an error: see redact
	svc openai.ChatCompletionService
}

// New builds an Executor for every `kind: api` model in cfg. Each key is
// read now, through getenv (os.Getenv in the daemon), from the variable
// that the model's apiKeyEnv names; an unset or empty variable is an error
// naming the variable and the model, so a missing key stops the start, not
// the fortieth task. A model with no apiKeyEnv sends no key (a local server).
func New(cfg *spool.Config, getenv func(string) string) (*Executor, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// Enough idle connections for the lane's cap of five per host.
	t.MaxIdleConnsPerHost = 8
	e := &Executor{transport: t, models: map[string]*model{}}
	hc := &http.Client{Transport: t}
	for i := range cfg.Models {
		mc := cfg.Models[i]
		if mc.Kind != spool.KindAPI {
			continue
		}
		m := &model{cfg: mc}
		if mc.APIKeyEnv != "" {
			m.key = getenv(mc.APIKeyEnv)
			if m.key == "" {
				return nil, fmt.Errorf("model %s: environment variable %s: %w", mc.Name, mc.APIKeyEnv, ErrNoKey)
			}
		}
		// NewChatCompletionService, unlike openai.NewClient, reads nothing
		// from the environment (OPENAI_API_KEY, OPENAI_BASE_URL, ...): the
		// config alone decides where a task goes and which key it carries.
		opts := []option.RequestOption{
			option.WithHTTPClient(hc),
			option.WithBaseURL(mc.BaseURL),
			option.WithMaxRetries(0),
		}
		if m.key != "" {
			opts = append(opts, option.WithAPIKey(m.key))
		}
		for k, v := range mc.Headers {
			opts = append(opts, option.WithHeader(k, v))
		}
		m.svc = openai.NewChatCompletionService(opts...)
		e.models[mc.Name] = m
	}
	return e, nil
}

// Close drops idle connections. The Executor stays usable.
func (e *Executor) Close() { e.transport.CloseIdleConnections() }

// errCallTimeout is the cause of an attempt's context when the model's own
// timeout ran out, as opposed to the lane ending the attempt.
var errCallTimeout = errors.New("model timeout")

// Execute sends one chat-completions request, streaming, and returns the
// answer's text. Each chunk that arrives is a heartbeat (job.Beat).
func (e *Executor) Execute(ctx context.Context, job *lanes.Job) (lanes.Result, error) {
	name := job.Task.Model
	if job.Model != nil {
		name = job.Model.Name
	}
	m, ok := e.models[name]
	if !ok {
		return lanes.Result{}, lanes.Errorf(spool.ClassPermanent, "model %q is not an api model in the config", name)
	}
	timeout := m.cfg.Timeout.D()
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	callCtx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()

	params := m.params(job.Task)
	job.SetStage("calling " + m.cfg.BaseURL)
	job.Log.Info("api call", "model", m.cfg.Name, "vendorModel", m.cfg.Model, "baseURL", m.cfg.BaseURL,
		"systemPrompt", len(params.Messages) > 1, "timeout", timeout)
	start := time.Now()

	text, chunks, err := m.stream(callCtx, params, job)
	if err != nil {
		err = m.classify(ctx, callCtx, timeout, err)
		job.Log.Warn("api call failed", "model", m.cfg.Name, "after", time.Since(start).Round(time.Millisecond),
			"class", lanes.Classify(err), "error", err.Error())
		return lanes.Result{}, err
	}
	if strings.TrimSpace(text) == "" {
		err := lanes.Errorf(spool.ClassPermanent, "%s: empty answer from model %s", m.cfg.Name, m.cfg.Model)
		job.Log.Warn("api call failed", "model", m.cfg.Name, "class", spool.ClassPermanent, "error", err.Error())
		return lanes.Result{}, err
	}
	job.Log.Info("api answer", "model", m.cfg.Name, "after", time.Since(start).Round(time.Millisecond),
		"chunks", chunks, "chars", len(text))
	return lanes.Result{Text: text}, nil
}

// params builds the request: a system message with the prompt unless it is
// empty or the model needs an empty prompt (reasoning models parrot it
// instead of reasoning), then one user message with the content.
func (m *model) params(t *spool.Task) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{Model: m.cfg.Model}
	if t.Prompt != "" && !m.cfg.NeedEmptyPrompt {
		p.Messages = append(p.Messages, openai.SystemMessage(t.Prompt))
	}
	p.Messages = append(p.Messages, openai.UserMessage(t.Content))
	if m.cfg.Temperature != nil {
		p.Temperature = openai.Float(*m.cfg.Temperature)
	}
	if m.cfg.MaxTokens > 0 {
		// max_tokens, not max_completion_tokens: it is the one every
		// OpenAI-compatible vendor reads.
		p.MaxTokens = openai.Int(int64(m.cfg.MaxTokens))
	}
	return p
}

// stream runs the call and gathers the answer, beating once per chunk.
func (m *model) stream(ctx context.Context, p openai.ChatCompletionNewParams, job *lanes.Job) (string, int, error) {
	s := m.svc.NewStreaming(ctx, p)
	defer s.Close()
	var b strings.Builder
	n := 0
	for s.Next() {
		n++
		job.Beat()
		if c := s.Current(); len(c.Choices) > 0 {
			b.WriteString(c.Choices[0].Delta.Content)
		}
		if n == 1 {
			job.SetStage("receiving answer")
		}
	}
	return b.String(), n, s.Err()
}
