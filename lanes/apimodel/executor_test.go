package apimodel

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// plantedKey is recognizable anywhere it leaks to.
const plantedKey = "sk-PLANTED-0123456789abcdef-LEAKCHECK"

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// stand starts a stand-in for one test.
func stand(t testing.TB, o apistand.Options) *apistand.Server {
	t.Helper()
	s, err := apistand.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("stand-in Close: %v", err)
		}
	})
	return s
}

// config builds a checked config whose api models point at baseURL.
func testConfig(t testing.TB, baseURL string, models ...config.ModelConfig) *config.Config {
	t.Helper()
	c := &config.Config{}
	for _, m := range models {
		m.Kind = taskfile.KindAPI
		if m.BaseURL == "" {
			m.BaseURL = baseURL
		}
		c.Models = append(c.Models, m)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	return c
}

// executor builds an Executor with the planted key under KEY_VAR.
func executor(t testing.TB, c *config.Config) *Executor {
	t.Helper()
	e, err := New(c, env(map[string]string{"KEY_VAR": plantedKey}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// logBuf is testkit's goroutine-safe buffer.
type logBuf = testkit.Buffer

func job(c *config.Config, model, prompt, content string, log *logBuf) *attempt.Job {
	m, _ := c.Model(model)
	var lg *slog.Logger
	if log != nil {
		lg = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return attempt.NewJob(&taskfile.Task{TaskID: "t1", Model: model, ModelKind: taskfile.KindAPI, Prompt: prompt, Content: content}, m, lg)
}

func TestExecutor_Messages(t *testing.T) {
	s := stand(t, apistand.Options{RequireKey: plantedKey})
	temp := 0.3
	c := testConfig(t, s.URL(),
		config.ModelConfig{Name: "writer", Model: "vendor-writer", APIKeyEnv: "KEY_VAR", Temperature: &temp, MaxTokens: 77,
			Headers: map[string]string{"X-Extra": "yes"}},
		config.ModelConfig{Name: "thinker", Model: "vendor-thinker", APIKeyEnv: "KEY_VAR", NeedEmptyPrompt: true},
		config.ModelConfig{Name: "o-series", Model: "vendor-o", APIKeyEnv: "KEY_VAR", MaxTokens: 55, MaxTokensField: config.MaxCompletionTokens},
	)
	e := executor(t, c)
	tests := []struct {
		name, model, prompt string
		wantSystem          bool
	}{
		{"prompt set", "writer", "You are terse.", true},
		{"empty prompt", "writer", "", false},
		{"needEmptyPrompt", "thinker", "You are terse.", false},
		{"max_completion_tokens", "o-series", "", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := job(c, tt.model, tt.prompt, "write  a\nhaiku", nil)
			res, err := e.Execute(t.Context(), j)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != "Answer: write a haiku" {
				t.Errorf("text %q", res.Text)
			}
			if j.Beats() < 2 {
				t.Errorf("%d beats; want one per chunk", j.Beats())
			}
			r := s.Requests()[i]
			if r.HasSystem != tt.wantSystem || (tt.wantSystem && r.System != tt.prompt) {
				t.Errorf("system present=%v %q; want present=%v", r.HasSystem, r.System, tt.wantSystem)
			}
			if r.User != "write  a\nhaiku" {
				t.Errorf("user content %q", r.User)
			}
			if r.Authorization != "Bearer "+plantedKey {
				t.Errorf("Authorization %q", r.Authorization)
			}
			m, _ := c.Model(tt.model)
			if r.Model != m.Model || !r.Stream {
				t.Errorf("model %q stream %v", r.Model, r.Stream)
			}
			if tt.model == "writer" && (r.MaxTokens != 77 || r.MaxCompletionTokens != 0 || r.Temperature == nil || *r.Temperature != 0.3 || r.Header.Get("X-Extra") != "yes") {
				t.Errorf("options not sent: max_tokens %d max_completion_tokens %d temperature %v X-Extra %q", r.MaxTokens, r.MaxCompletionTokens, r.Temperature, r.Header.Get("X-Extra"))
			}
			if tt.model == "o-series" && (r.MaxCompletionTokens != 55 || r.MaxTokens != 0 || r.Temperature != nil) {
				t.Errorf("maxTokensField max_completion_tokens: max_completion_tokens %d max_tokens %d temperature %v; want 55, 0, none", r.MaxCompletionTokens, r.MaxTokens, r.Temperature)
			}
		})
	}
}

// A model without apiKeyEnv sends no Authorization, even with
// OPENAI_API_KEY in the environment: the config alone decides.
func TestExecutor_NoKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-ambient-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	s := stand(t, apistand.Options{})
	c := testConfig(t, s.URL(), config.ModelConfig{Name: "local"})
	e := executor(t, c)
	if _, err := e.Execute(t.Context(), job(c, "local", "", "x", nil)); err != nil {
		t.Fatal(err)
	}
	if a := s.Requests()[0].Authorization; a != "" {
		t.Errorf("Authorization %q sent for a model without apiKeyEnv", a)
	}
}

func TestNew_MissingKey(t *testing.T) {
	c := testConfig(t, "http://127.0.0.1:1/v1",
		config.ModelConfig{Name: "ok", APIKeyEnv: "KEY_VAR"},
		config.ModelConfig{Name: "deepseek-chat", APIKeyEnv: "DEEPSEEK_API_KEY"})
	for _, vars := range []map[string]string{{"KEY_VAR": "k"}, {"KEY_VAR": "k", "DEEPSEEK_API_KEY": ""}} {
		_, err := New(c, env(vars))
		if err == nil || !errors.Is(err, ErrNoKey) || !strings.Contains(err.Error(), "DEEPSEEK_API_KEY") || !strings.Contains(err.Error(), "deepseek-chat") {
			t.Errorf("New with %v: %v; want an error naming DEEPSEEK_API_KEY and deepseek-chat", vars, err)
		}
	}
}

// closedURL returns a base URL on which nothing listens.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

func TestExecutor_Errors(t *testing.T) {
	s := stand(t, apistand.Options{RequireKey: plantedKey, Scale: 1})
	wrong := stand(t, apistand.Options{RequireKey: "another-key"})
	c := testConfig(t, s.URL(),
		config.ModelConfig{Name: "m", APIKeyEnv: "KEY_VAR", Timeout: config.Duration(300 * time.Millisecond)},
		config.ModelConfig{Name: "badkey", APIKeyEnv: "KEY_VAR", BaseURL: wrong.URL()},
		config.ModelConfig{Name: "down", APIKeyEnv: "KEY_VAR", BaseURL: closedURL(t)},
	)
	e := executor(t, c)
	tests := []struct {
		name, model, content string
		class                taskfile.ErrorClass
		msg                  string // must appear in the error
	}{
		{"500", "m", "[[status=500]] x", taskfile.ClassTransient, "HTTP 500 (server_error): stand-in: status 500 requested"},
		{"503", "m", "[[status=503]] x", taskfile.ClassTransient, "HTTP 503"},
		{"400", "m", "[[status=400]] x", taskfile.ClassPermanent, "HTTP 400 (invalid_request_error): stand-in: status 400 requested"},
		{"403", "m", "[[status=403]] x", taskfile.ClassPermanent, "HTTP 403"},
		{"404", "m", "[[status=404]] x", taskfile.ClassPermanent, "HTTP 404"},
		{"401", "badkey", "x", taskfile.ClassAccount, "HTTP 401 (invalid_request_error): Incorrect API key provided."},
		{"timeout", "m", "[[duration=1h]] x", taskfile.ClassTransient, "model timeout"},
		{"timeout mid-stream", "m", "[[hang]] x", taskfile.ClassTransient, "model timeout"},
		{"connection refused", "down", "x", taskfile.ClassTransient, "connection refused"},
		{"empty answer", "m", "[[empty]] x", taskfile.ClassPermanent, "empty answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &logBuf{}
			t0 := time.Now()
			_, err := e.Execute(t.Context(), job(c, tt.model, "p", tt.content, log))
			var te *attempt.TaskError
			if !errors.As(err, &te) {
				t.Fatalf("error %v (%T); want a *attempt.TaskError", err, err)
			}
			if te.Class != tt.class || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("got %s %q; want %s containing %q", te.Class, err, tt.class, tt.msg)
			}
			if te.RetryAfter != 0 {
				t.Errorf("RetryAfter %v on a non-429", te.RetryAfter)
			}
			if el := time.Since(t0); el > 3*time.Second {
				t.Errorf("took %v", el)
			}
			if strings.Contains(err.Error(), plantedKey) || strings.Contains(log.String(), plantedKey) {
				t.Errorf("key leaked: error %q log %q", err, log)
			}
			if !strings.Contains(log.String(), "api call failed") {
				t.Errorf("failure not logged: %q", log)
			}
		})
	}
}

func TestExecutor_RateLimited(t *testing.T) {
	s := stand(t, apistand.Options{Quota: 1, RetryAfter: 7 * time.Second})
	c := testConfig(t, s.URL(), config.ModelConfig{Name: "m"})
	e := executor(t, c)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Execute(ctx, job(c, "m", "", "[[hang]]", nil))
	}()
	testkit.Wait(t, "s.InFlight() == 1", 5*time.Second, func() bool { return s.InFlight() == 1 })
	_, err := e.Execute(t.Context(), job(c, "m", "", "x", nil))
	cancel()
	<-done
	var te *attempt.TaskError
	if !errors.As(err, &te) || te.Class != taskfile.ClassTransient || te.RetryAfter != 7*time.Second || !strings.Contains(err.Error(), "HTTP 429") {
		t.Fatalf("got %v (%+v); want transient HTTP 429 with RetryAfter 7s", err, te)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		h    map[string]string
		want time.Duration
	}{
		{map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "-4"}, 0},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{map[string]string{}, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.h {
			h.Set(k, v)
		}
		if got := RetryAfter(h, now); got != tt.want {
			t.Errorf("RetryAfter(%v) = %v; want %v", tt.h, got, tt.want)
		}
	}
}

// A canceled attempt returns promptly with the lane's cause, however long
// the answer would have taken.
func TestExecutor_Canceled(t *testing.T) {
	s := stand(t, apistand.Options{})
	c := testConfig(t, s.URL(), config.ModelConfig{Name: "m", Timeout: config.Duration(time.Hour)})
	e := executor(t, c)
	for _, content := range []string{"[[hang]] streaming", "[[duration=1h]] waiting"} {
		ctx, cancel := context.WithCancelCause(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := e.Execute(ctx, job(c, "m", "", content, nil))
			errc <- err
		}()
		testkit.Wait(t, "s.InFlight() == 1", 5*time.Second, func() bool { return s.InFlight() == 1 })
		t0 := time.Now()
		cancel(attempt.ErrCanceled)
		select {
		case err := <-errc:
			if !errors.Is(err, attempt.ErrCanceled) {
				t.Errorf("%s: error %v; want the cause %v", content, err, attempt.ErrCanceled)
			}
			if el := time.Since(t0); el > time.Second {
				t.Errorf("%s: returned %v after cancel", content, el)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Execute did not return after cancel", content)
		}
		testkit.Wait(t, "s.InFlight() == 0", 5*time.Second, func() bool { return s.InFlight() == 0 })
	}
}

// Five attempts at once against a quota of three: the excess get 429 and
// the stand-in never answers more than three at once. The admitted three
// hang until the test has seen the 429s, so the overlap does not depend on
// how fast the machine is.
func TestExecutor_Quota(t *testing.T) {
	s := stand(t, apistand.Options{Quota: 3})
	c := testConfig(t, s.URL(), config.ModelConfig{Name: "m"})
	e := executor(t, c)
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	var wg sync.WaitGroup
	var returned atomic.Int32
	errs := make([]error, 5)
	for i := range 5 {
		wg.Go(func() {
			_, errs[i] = e.Execute(ctx, job(c, "m", "", "[[hang]] x", nil))
			returned.Add(1)
		})
	}
	// Cancel only once the two refused calls have returned their 429: a
	// cancel before the client has read the answer would end them too.
	testkit.Wait(t, "s.Total() == 5 && s.InFlight() == 3 && returned.Load() == 2", 5*time.Second, func() bool { return s.Total() == 5 && s.InFlight() == 3 && returned.Load() == 2 })
	cancel(attempt.ErrCanceled)
	wg.Wait()
	admitted, limited := 0, 0
	for _, err := range errs {
		var te *attempt.TaskError
		switch {
		case errors.Is(err, attempt.ErrCanceled):
			admitted++
		case errors.As(err, &te) && te.Class == taskfile.ClassTransient && te.RetryAfter > 0 && strings.Contains(err.Error(), "HTTP 429"):
			limited++
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if admitted != 3 || limited != 2 || s.Rejected() != 2 {
		t.Errorf("%d admitted, %d rate-limited (stand-in served %d 429s); want 3 and 2", admitted, limited, s.Rejected())
	}
	if m := s.MaxConcurrent(); m != 3 {
		t.Errorf("stand-in saw %d at once; want 3", m)
	}
	// Once the slots are free, a retry gets through.
	testkit.Wait(t, "s.InFlight() == 0", 5*time.Second, func() bool { return s.InFlight() == 0 })
	if res, err := e.Execute(t.Context(), job(c, "m", "", "again", nil)); err != nil || res.Text != "Answer: again" {
		t.Errorf("after the quota freed: %q, %v", res.Text, err)
	}
}

// The key never shows in an error or a log line, even when the server
// echoes it back.
func TestExecutor_KeyNeverLeaks(t *testing.T) {
	s := stand(t, apistand.Options{RequireKey: "something-else"})
	c := testConfig(t, s.URL(), config.ModelConfig{Name: "m", APIKeyEnv: "KEY_VAR"})
	e := executor(t, c)
	m := e.models["m"]
	for _, in := range []string{
		"Incorrect API key provided: " + plantedKey,
		"Incorrect API key provided: " + plantedKey[:len(plantedKey)-4] + "****",
	} {
		if out := m.red.redact(in); strings.Contains(out, plantedKey[:len(plantedKey)-4]) {
			t.Errorf("redact(%q) = %q", in, out)
		}
	}
	log := &logBuf{}
	_, err := e.Execute(t.Context(), job(c, "m", "", "x", log))
	if err == nil || strings.Contains(err.Error(), plantedKey) || strings.Contains(log.String(), plantedKey) {
		t.Errorf("error %v, log %q", err, log)
	}
	if s.Requests()[0].Authorization != "Bearer "+plantedKey {
		t.Error("the key was not sent at all")
	}
}

func TestExecutor_UnknownModel(t *testing.T) {
	c := testConfig(t, "http://127.0.0.1:1/v1", config.ModelConfig{Name: "m"})
	e := executor(t, c)
	j := attempt.NewJob(&taskfile.Task{TaskID: "t", Model: "nope", Content: "x"}, nil, nil)
	if _, err := e.Execute(t.Context(), j); attempt.Classify(err) != taskfile.ClassPermanent {
		t.Errorf("unknown model: %v", err)
	}
}

// BenchmarkExecutor_Execute measures one attempt's overhead against a
// stand-in answering at once.
func BenchmarkExecutor_Execute(b *testing.B) {
	s := stand(b, apistand.Options{})
	c := testConfig(b, s.URL(), config.ModelConfig{Name: "m", APIKeyEnv: "KEY_VAR"})
	e := executor(b, c)
	m, _ := c.Model("m")
	task := &taskfile.Task{TaskID: "t", Model: "m", Prompt: "be brief", Content: "a short task of a few words"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Execute(b.Context(), attempt.NewJob(task, m, nil)); err != nil {
			b.Fatal(err)
		}
	}
}
