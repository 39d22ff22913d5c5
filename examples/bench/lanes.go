package bench

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Model names of Config.
const (
	APIModel = "writer"
	WebModel = "chat-web"
)

// Config is a spoolgate config for a bench run: the spool and the web
// profiles under dir, the API model at apiURL (no key), the web model on
// the chat stand-in's page at chatURL, and the retry policy.
func Config(dir, apiURL, chatURL string, apiConcurrency, maxRetries int, backoff time.Duration) (*config.Config, error) {
	return ConfigSessions(dir, apiURL, chatURL, apiConcurrency, maxRetries, backoff, 1)
}

// ConfigSessions is Config with the given number of web sessions: one
// (the single account demo, as every install before sessions), or
// accounts s1..sN of the stand-in's site, each its own session, the web
// model unpinned.
func ConfigSessions(dir, apiURL, chatURL string, apiConcurrency, maxRetries int, backoff time.Duration, sessions int) (*config.Config, error) {
	webModel := "account: demo"
	accounts := ""
	if sessions > 1 {
		webModel = "accounts: []"
		accounts = "accounts:\n"
		for i := range sessions {
			accounts += fmt.Sprintf("  s%d: {site: standin}\n", i+1)
		}
	}
	y := fmt.Sprintf(`
spool: %q
settle: 2s
rescan: 5s
maxRetries: %d
retryBackoff: %s
shutdownGrace: 5s
http: "off"
api:
  concurrency: %d
web:
  profiles: %q
  instance: bench
models:
  - {name: %s, kind: api, baseURL: %q, model: stand-in, timeout: 120s}
  - {name: %s, kind: web, site: standin, %s, needEmptyPrompt: true}
sites:
  standin:
    url: %q
    input: "textarea.input"
    send: "button[type=submit]"
    answer: ".message.assistant"
    busy: "button.stop"
    loggedOut: "a.login"
    error: ".error"
%s`, filepath.Join(dir, "spool"), maxRetries, backoff, apiConcurrency, filepath.Join(dir, "profiles"),
		APIModel, apiURL, WebModel, webModel, chatURL, accounts)
	return config.ParseConfig([]byte(y))
}

// Models returns the model of each kind in a Config.
func Models(cfg *config.Config) map[taskfile.Kind]*config.ModelConfig {
	out := map[taskfile.Kind]*config.ModelConfig{}
	for _, name := range []string{APIModel, WebModel} {
		if m, ok := cfg.Model(name); ok {
			out[m.Kind] = m
		}
	}
	return out
}

// Lanes is spoolgate's own strategy: the real lanes.Daemon on a fresh
// spool, two lanes with their own schedulers and pools (web 1, API
// api.concurrency), tasks dropped as files the way `spoolgate submit`
// drops them.
type Lanes struct {
	// Cfg is the daemon's config (see Config); its spool must be empty.
	Cfg *config.Config
	// Exec is the executor of each lane; a lane without one does not run.
	Exec map[taskfile.Kind]attempt.Executor
	// Scale is the stand-ins' time scale.
	Scale float64
	// Quota is the API vendor's quota, for the lower bound.
	Quota int
	// Name names the run in the table; default "spoolgate two lanes".
	Name string
	// Log receives the daemon's log; default: discard.
	Log *slog.Logger
}

// Limits are the lanes': one task per web session, API calls capped by
// api.concurrency and the vendor's quota; each lane has its own workers.
func (l *Lanes) Limits() Limits {
	api := l.Cfg.API.Concurrency
	if l.Quota > 0 {
		api = min(api, l.Quota)
	}
	return Limits{Sessions: config.Concurrency(l.Cfg, taskfile.KindWeb), API: api}
}

// Run drops tasks into the lanes' incoming folders, waits until each has
// a final state (or ctx ends), then shuts the daemon down.
func (l *Lanes) Run(ctx context.Context, tasks []Task) (Result, error) {
	tl := newTally(tasks)
	done := make(chan struct{})
	var once sync.Once
	execs := map[taskfile.Kind]attempt.Executor{}
	for k, ex := range l.Exec {
		execs[k] = recording{ex: ex, tl: tl}
	}
	store := spool.NewStore(l.Cfg, l.Log)
	d := &lanes.Daemon{Store: store, Executors: execs, Log: l.Log, Hooks: lanes.Hooks{
		OnAttemptEnd: func(_ taskfile.Kind, t *taskfile.Task, _ time.Duration) {
			if !t.State.Final() {
				return
			}
			if tl.final(t.TaskID, t.State, time.Now()) == len(tasks) {
				once.Do(func() { close(done) })
			}
		},
	}}
	if err := d.Start(ctx); err != nil {
		return Result{}, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), l.Cfg.ShutdownGrace.D())
		defer cancel()
		d.Shutdown(sctx)
	}()
	models := Models(l.Cfg)
	t0 := time.Now()
	for _, t := range tasks {
		task := &taskfile.Task{TaskID: t.ID, Model: models[t.Kind].Name, Content: t.Content(), Batch: "bench"}
		data, err := task.Encode()
		if err != nil {
			return Result{}, err
		}
		tl.submit(t.ID, time.Now())
		if _, err := store.Submit(store.Layout.Lane(t.Kind, taskfile.DirIncoming), t.ID, data); err != nil {
			return Result{}, fmt.Errorf("drop %s: %w", t.ID, err)
		}
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
	name := l.Name
	if name == "" {
		name = "spoolgate two lanes"
	}
	note := fmt.Sprintf("lanes.Daemon: web lane %d (one per session), api lane %d, on a spool", config.Concurrency(l.Cfg, taskfile.KindWeb), l.Cfg.API.Concurrency)
	return tl.result(name, note, tasks, t0, l.Scale, l.Limits()), ctx.Err()
}

// recording counts each attempt and its outcome.
type recording struct {
	ex attempt.Executor
	tl *tally
}

func (r recording) Execute(ctx context.Context, job *attempt.Job) (attempt.Result, error) {
	r.tl.attempt(job.Task.TaskID, time.Now())
	res, err := r.ex.Execute(ctx, job)
	r.tl.outcome(job.Task.TaskID, err)
	return res, err
}
