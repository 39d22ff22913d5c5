// Package apimodel runs tasks on API models: any OpenAI-compatible
// chat-completions endpoint.
//
// The client is written here, on net/http, rather than taken from an SDK:
// spoolgate talks to many servers that are only roughly OpenAI-compatible,
// and the lane must read each of their answers for what it is (a JSON
// completion to a streamed request, an express error body, an error event
// inside a 200 stream, a proxy's HTML page) and class it. An SDK decodes
// those before we see them, into an empty answer or a JSON type error; what
// is left of the protocol (one POST, server-sent events) is small. Retries,
// backoff and Retry-After belong to the lane, so the client has none.
package apimodel

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/lanes/artifacts"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// ErrNoKey is returned by New when an api model's apiKeyEnv names a
// variable that is unset or empty.
var ErrNoKey = errors.New("api key variable is unset or empty")

// Executor calls API models. It implements attempt.Executor and is safe for
// concurrent use: the API lane runs up to five attempts at once.
type Executor struct {
	transport *http.Transport
	client    *http.Client
	pictures  *http.Client // images endpoint's picture urls (picturehosts.go)
	models    map[string]*model
	limits    artifacts.Limits // endpoint: images' pictures (config artifacts:)
	maxAttach int              // attachments.maxBytes: the most one attachment's read takes
}

// model is one api model, set up once at start.
type model struct {
	cfg      config.ModelConfig
	endpoint string    // baseURL + /chat/completions, the base's query kept
	key      string    // never logged, never in an error: see red
	red      *redactor // hides key in everything a server sends that is kept
}

// New builds an Executor for every `kind: api` model in cfg. Each key is
// read now, through getenv (os.Getenv in the daemon), from the variable
// that the model's apiKeyEnv names; an unset or empty variable is an error
// naming the variable and the model, so a missing key stops the start, not
// the fortieth task. A model with no apiKeyEnv sends no key (a local
// server). Nothing else is read from the environment: the config alone
// decides where a task goes and which key it carries.
func New(cfg *config.Config, getenv func(string) string) (*Executor, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// Enough idle connections for the lane's cap of five per host.
	t.MaxIdleConnsPerHost = 8
	e := &Executor{transport: t, models: map[string]*model{}, maxAttach: cfg.Attachments.MaxBytes}
	e.limits = artifacts.Limits{MaxFile: cfg.Artifacts.MaxFile(), MaxTask: cfg.Artifacts.MaxTask()}
	e.client = &http.Client{
		Transport: t,
		// A redirect would turn the POST into a GET and drop the key on
		// the way to another host: report it instead (see failure).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	e.pictures = pictureClient(t.Proxy)
	for i := range cfg.Models {
		mc := cfg.Models[i]
		if mc.Kind != taskfile.KindAPI {
			continue
		}
		m := &model{cfg: mc}
		if mc.APIKeyEnv != "" {
			m.key = getenv(mc.APIKeyEnv)
			if m.key == "" {
				return nil, fmt.Errorf("model %s: environment variable %s: %w", mc.Name, mc.APIKeyEnv, ErrNoKey)
			}
		}
		m.red = newRedactor(m.key)
		u, err := url.Parse(mc.BaseURL)
		if err != nil {
			return nil, fmt.Errorf("model %s: baseURL: %w", mc.Name, err)
		}
		u.Path = strings.TrimSuffix(u.Path, "/") + "/chat/completions"
		u.RawPath = ""
		m.endpoint = u.String()
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
// answer's text. Each event that arrives is a heartbeat (job.Beat). A
// server that answers with one JSON completion instead is read as well.
func (e *Executor) Execute(ctx context.Context, job *attempt.Job) (attempt.Result, error) {
	name := job.Task.Model
	if job.Model != nil {
		name = job.Model.Name
	}
	m, ok := e.models[name]
	if !ok {
		return attempt.Result{}, attempt.Errorf(taskfile.ClassPermanent, "model %q is not an api model in the config", name)
	}
	timeout := m.cfg.Timeout.D()
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	if m.cfg.Endpoint == config.EndpointImages {
		return e.images(ctx, m, job, timeout)
	}
	callCtx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()

	files, err := loadAttachments(job.Task, e.maxAttach)
	if err != nil {
		return attempt.Result{}, err
	}
	body := m.request(job.Task, files)
	job.SetStage("calling " + m.cfg.BaseURL)
	job.Log.Info("api call", "model", m.cfg.Name, "vendorModel", m.cfg.Model, "baseURL", m.cfg.BaseURL,
		"systemPrompt", len(body.Messages) > 1, "timeout", timeout)
	start := time.Now()

	ans, err := m.call(callCtx, e.client, body, job)
	if err != nil {
		err = m.classify(ctx, callCtx, timeout, err)
		job.Log.Warn("api call failed", "model", m.cfg.Name, "after", time.Since(start).Round(time.Millisecond),
			"class", attempt.Classify(err), "error", err.Error())
		return attempt.Result{}, err
	}
	text, think := m.red.redact(ans.text), m.red.redact(ans.think)
	if text != ans.text || think != ans.think {
		job.Log.Warn("api answer contained the API key: masked", "model", m.cfg.Name)
	}
	if think == "" {
		text, think = taskfile.SplitThink(text) // a model that thinks inline, as <think>…</think>
	} else if a, inline := taskfile.SplitThink(text); inline != "" {
		text, think = a, strings.TrimSpace(think)+"\n\n"+inline
	}
	think = strings.TrimSpace(think)
	if strings.TrimSpace(text) == "" {
		why := ""
		if ans.finish != "" {
			why = " (finish_reason " + m.red.keep(ans.finish, 40) + ")"
		}
		err := attempt.Errorf(taskfile.ClassPermanent, "%s: empty answer from model %s%s", m.cfg.Name, m.cfg.Model, why)
		job.Log.Warn("api call failed", "model", m.cfg.Name, "class", taskfile.ClassPermanent, "error", err.Error())
		return attempt.Result{}, err
	}
	job.Log.Info("api answer", "model", m.cfg.Name, "after", time.Since(start).Round(time.Millisecond),
		"form", ans.form, "events", ans.events, "chars", len(text), "finish", m.red.keep(ans.finish, 40))
	res := attempt.Result{Text: text, Reasoning: think}
	if u := ans.usage; u != nil {
		res.Usage = u.counts()
	}
	return res, nil
}
