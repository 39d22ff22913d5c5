package apimodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The npm mock LLM server (@dwmkerr/mock-llm, an express app written by
// others) that `make test` installs into examples/mockllm with `npm ci`.
const (
	mockLLMDir  = "../../examples/mockllm"
	mockLLMMain = "node_modules/@dwmkerr/mock-llm/dist/main.js"
)

// startMockLLM runs the npm mock server on 127.0.0.1 with the rules of
// examples/mockllm/mock-llm.yaml and returns its base URL (…/v1). It is
// killed at cleanup. Without node or the package the test fails, with how
// to install them; it skips only on a developer machine that says so with
// SPOOLGATE_NO_NPM=1, never in CI (CI=true).
func startMockLLM(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(mockLLMDir)
	if err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(dir, filepath.FromSlash(mockLLMMain))
	node, nerr := exec.LookPath("node")
	_, merr := os.Stat(main)
	if missing := errors.Join(nerr, merr); missing != nil {
		if os.Getenv("SPOOLGATE_NO_NPM") != "" && os.Getenv("CI") != "true" {
			t.Skipf("SPOOLGATE_NO_NPM is set and the npm mock server is absent: %v", missing)
		}
		t.Fatalf("the npm mock LLM server is absent (%v): install node and npm, then run `make mockllm` "+
			"(npm ci in examples/mockllm); on a developer machine without node, SPOOLGATE_NO_NPM=1 skips this test (never in CI)", missing)
	}
	// A free port, asked of the kernel and handed over: the mock takes its
	// port from PORT only. If another process takes it in between, the
	// mock exits and the next try takes another.
	for try := 0; try < 3; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		out := &logBuf{}
		cmd := exec.Command(node, main, "--config", filepath.Join(dir, "mock-llm.yaml"))
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "HOST=127.0.0.1", "PORT="+strconv.Itoa(port))
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", node, err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-exited
		})
		base := "http://127.0.0.1:" + strconv.Itoa(port)
		if waitHealthy(t, base, exited) {
			return base + "/v1"
		}
		if !strings.Contains(out.String(), "EADDRINUSE") {
			t.Fatalf("the mock LLM server exited:\n%s", out)
		}
	}
	t.Fatal("the mock LLM server found no free port in 3 tries")
	return ""
}

// waitHealthy polls the mock's /health until it answers (true) or the
// process exits (false); node's start-up on a loaded machine takes
// seconds, so the deadline is generous.
func waitHealthy(t *testing.T, base string, exited <-chan struct{}) bool {
	t.Helper()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 2 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if resp, err := hc.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		select {
		case <-exited:
			return false
		case <-tick.C:
		}
	}
	t.Fatal("the mock LLM server did not answer /health within 60s")
	return false
}

// noStreamProxy stands in front of target as the gateways that ignore
// `stream: true` do: it drops `stream` from each request body, so the mock
// answers with its own JSON completion (or JSON error with its status).
// It records whether spoolgate had asked for a stream.
type noStreamProxy struct {
	mu       sync.Mutex
	streamed []bool
}

func (p *noStreamProxy) start(t *testing.T, target string) string {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	rp := &httputil.ReverseProxy{
		Transport: tr,
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host})
			var body map[string]any
			data, _ := io.ReadAll(r.In.Body)
			if json.Unmarshal(data, &body) == nil {
				p.mu.Lock()
				p.streamed = append(p.streamed, body["stream"] == true)
				p.mu.Unlock()
				delete(body, "stream")
				data, _ = json.Marshal(body)
			}
			r.Out.Body = io.NopCloser(bytes.NewReader(data))
			r.Out.ContentLength = int64(len(data))
			r.Out.Header.Del("Content-Length")
		},
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(func() {
		srv.Close()
		tr.CloseIdleConnections()
	})
	return srv.URL + "/v1"
}

// spoolgate's API executor against a real OpenAI-compatible server written
// by others: streamed and non-streamed answers, maxTokensField, error
// events inside a 200 stream, JSON error answers, express's own 413 and
// 404 bodies; the key the mock echoes back is never kept.
func TestMockLLM(t *testing.T) {
	mock := startMockLLM(t)
	proxy := &noStreamProxy{}
	viaProxy := proxy.start(t, strings.TrimSuffix(mock, "/v1"))
	wrongPath := strings.TrimSuffix(mock, "/v1") + "/v2"
	c := testConfig(t, mock,
		config.ModelConfig{Name: "stream", Model: "gpt-test", APIKeyEnv: "KEY_VAR", MaxTokens: 77},
		config.ModelConfig{Name: "o-series", Model: "o-test", APIKeyEnv: "KEY_VAR", MaxTokens: 55, MaxTokensField: config.MaxCompletionTokens},
		config.ModelConfig{Name: "json", Model: "gpt-test", APIKeyEnv: "KEY_VAR", BaseURL: viaProxy},
		config.ModelConfig{Name: "v2", Model: "gpt-test", APIKeyEnv: "KEY_VAR", BaseURL: wrongPath},
	)
	e := executor(t, c)
	big := "a long brief " + strings.Repeat("x", 150<<10) // over express.json's 100 kB
	tests := []struct {
		name, model, content string
		text                 string // the answer; "" means an error is wanted
		form                 string
		class                taskfile.ErrorClass
		msg                  string
		retryAfter           time.Duration
	}{
		{name: "streamed answer", model: "stream", content: "hello spoolgate", text: "Echo: hello spoolgate", form: "form=stream"},
		{name: "non-streamed answer to a streamed request", model: "json", content: "hello json", text: "Echo: hello json", form: "form=json"},
		{name: "max_tokens", model: "stream", content: "token-limit", text: "max_tokens=77 max_completion_tokens=null", form: "form=stream"},
		{name: "max_completion_tokens", model: "o-series", content: "token-limit", text: "max_tokens=null max_completion_tokens=55", form: "form=stream"},
		{name: "stream error invalid_api_key", model: "stream", content: "bad-key", class: taskfile.ClassAccount,
			msg: "stream: error event in the answer stream (invalid_api_key): Incorrect API key provided: Bearer [redacted]. You can find"},
		{name: "stream error insufficient_quota", model: "stream", content: "no-quota", class: taskfile.ClassAccount,
			msg: "error event in the answer stream (insufficient_quota): You exceeded your current quota"},
		{name: "stream error model_not_found", model: "stream", content: "no-model", class: taskfile.ClassPermanent,
			msg: "error event in the answer stream (model_not_found): The model `gpt-test` does not exist"},
		{name: "stream error rate_limit_exceeded", model: "stream", content: "slow-down", class: taskfile.ClassTransient, retryAfter: 1500 * time.Millisecond,
			msg: "error event in the answer stream (rate_limit_exceeded): Rate limit reached"},
		{name: "HTTP 401 invalid_api_key", model: "json", content: "bad-key", class: taskfile.ClassAccount,
			msg: "json: HTTP 401 (invalid_api_key): Incorrect API key provided: Bearer [redacted]."},
		{name: "HTTP 429 insufficient_quota", model: "json", content: "no-quota", class: taskfile.ClassAccount,
			msg: "json: HTTP 429 (insufficient_quota): You exceeded your current quota"},
		{name: "HTTP 429 rate_limit_exceeded", model: "json", content: "slow-down", class: taskfile.ClassTransient, retryAfter: 1500 * time.Millisecond,
			msg: "json: HTTP 429 (rate_limit_exceeded): Rate limit reached"},
		{name: "express 413 string error", model: "stream", content: big, class: taskfile.ClassPermanent,
			msg: "stream: HTTP 413: PayloadTooLargeError: request entity too large"},
		{name: "express 404 string error", model: "v2", content: "hello", class: taskfile.ClassPermanent,
			msg: "v2: HTTP 404: Not Found: Cannot POST /v2/chat/completions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, te, log := run(t, e, c, tt.model, tt.content)
			if fr := keyFragments(plantedKey, res.Text+log+errText(te)); len(fr) > 0 {
				t.Errorf("pieces of the key kept: %v", fr)
			}
			if tt.text != "" {
				if te != nil || res.Text != tt.text {
					t.Fatalf("got %q, %v; want the answer %q", res.Text, te, tt.text)
				}
				if !strings.Contains(log, tt.form) {
					t.Errorf("log does not say %s: %q", tt.form, log)
				}
				return
			}
			if te == nil {
				t.Fatalf("answer %q; want a %s error", res.Text, tt.class)
			}
			if te.Class != tt.class || te.RetryAfter != tt.retryAfter || !strings.Contains(te.Error(), tt.msg) {
				t.Errorf("got %s, RetryAfter %v, %q; want %s, %v, containing %q", te.Class, te.RetryAfter, te, tt.class, tt.retryAfter, tt.msg)
			}
		})
	}
	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	for i, s := range proxy.streamed {
		if !s {
			t.Errorf("request %d through the proxy did not ask for a stream", i)
		}
	}
	if len(proxy.streamed) != 4 {
		t.Errorf("%d requests through the proxy; want 4", len(proxy.streamed))
	}
}

func errText(err *attempt.TaskError) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
