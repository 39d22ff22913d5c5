package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// ErrCollision is a web call refused because the account's one session was
// already generating: the chat stand-in's "one message at a time".
var ErrCollision = errors.New("web session busy: a generation was already running (collision)")

// ChatHTTP is a web-model executor that stands in for the browser in the
// benchmark only: it calls the chat stand-in's HTTP form of the page
// (POST /api/generate), which enforces the same one-generation-per-account
// rule as the page. A call uses the job's web session's account (the
// lanes with several sessions), else Session: every worker of a shared
// pool uses the one logged-in account.
type ChatHTTP struct {
	// URL is the stand-in's page URL, ending in "/".
	URL string
	// Session is the account's user when the job has no web session;
	// default "demo".
	Session string
	// Client defaults to a client of its own.
	Client *http.Client
}

// Execute sends the task's content and returns the answer. A collision is a
// transient *attempt.TaskError wrapping ErrCollision.
func (c *ChatHTTP) Execute(ctx context.Context, job *attempt.Job) (attempt.Result, error) {
	sess := job.Session.Account
	if sess == "" {
		sess = c.Session
	}
	if sess == "" {
		sess = "demo"
	}
	req := map[string]string{"session": sess, "content": job.Task.Content}
	if job.Model == nil || !job.Model.NeedEmptyPrompt {
		req["system"] = job.Task.Prompt
	}
	body, _ := json.Marshal(req)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.URL, "/")+"/api/generate", bytes.NewReader(body))
	if err != nil {
		return attempt.Result{}, attempt.Errorf(taskfile.ClassPermanent, "chat: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	cl := c.Client
	if cl == nil {
		cl = http.DefaultClient
	}
	resp, err := cl.Do(hr)
	if err != nil {
		return attempt.Result{}, fmt.Errorf("chat: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		Answer string `json:"answer"`
		Error  string `json:"error"`
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return attempt.Result{}, fmt.Errorf("chat: read answer: %w", err)
	}
	_ = json.Unmarshal(data, &out)
	switch {
	case resp.StatusCode == http.StatusConflict:
		return attempt.Result{}, &attempt.TaskError{Class: taskfile.ClassTransient, Err: fmt.Errorf("%w: %s", ErrCollision, out.Error)}
	case resp.StatusCode != http.StatusOK:
		return attempt.Result{}, attempt.Errorf(taskfile.ClassTransient, "chat: HTTP %d: %s", resp.StatusCode, out.Error)
	}
	job.Beat()
	return attempt.Result{Text: out.Answer}, nil
}
