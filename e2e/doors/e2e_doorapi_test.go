//go:build unix

package doors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// doorAPIRig is an API-only rig (no browser) with the front door.
func doorAPIRig(t *testing.T, door string) (*doorRig, *rig.Daemon) {
	t.Helper()
	api := rig.APIStand(t, apistand.Options{RequireKey: rig.APIKey, Scale: 0.01})
	models := fmt.Sprintf("models:\n  - {name: api-door, kind: api, baseURL: %[1]q, model: stand-in, apiKeyEnv: E2E_API_KEY, timeout: 10s}\n"+
		"  - {name: api-other, kind: api, baseURL: %[1]q, model: stand-in, apiKeyEnv: E2E_API_KEY, timeout: 10s}\n", api.URL())
	sr := rig.New(t, rig.Opts{HTTP: "127.0.0.1:0", Tail: models + doorTail(door)}, "E2E_API_KEY="+rig.APIKey)
	d := sr.Start()
	r := &doorRig{Sites: &rig.Sites{Rig: sr}, api: api}
	r.base = rig.StatusURL(t, d)
	return r, d
}

// doorDo sends one request and decodes its JSON answer.
func (r *doorRig) doorDo(method, path, tok string, body any, hdr ...string) (int, http.Header, map[string]any) {
	r.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, _ := json.Marshal(b)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, r.base+path, rd)
	if err != nil {
		r.T.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var m map[string]any
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, &m); err != nil {
		r.T.Fatalf("%s %s: status %d, not JSON: %q", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode, resp.Header, m
}

// openAIError checks m is OpenAI's error shape and returns its fields.
func openAIError(t *testing.T, what string, m map[string]any) (typ, code, param string) {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("%s: not an OpenAI error: %v", what, m)
	}
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := e[k]; !ok {
			t.Errorf("%s: error without %q: %v", what, k, e)
		}
	}
	s := func(k string) string { v, _ := e[k].(string); return v }
	return s("type"), s("code"), s("param")
}

// Refused, each in OpenAI's error shape: no token, a wrong token, a model
// the token may not use, a model that does not exist, a body over the
// limit, malformed requests, earlier turns; over the token's rate and over
// the lane's queue, 429 with Retry-After. The Go SDK reads each as an
// *openai.Error with its status, code and param. No token is logged.
func TestE2E_Door_Refusals(t *testing.T) {
	t.Parallel()
	r, d := doorAPIRig(t, ", maxBody: 2048, maxQueue: 2")
	user := func(s string) []any { return []any{map[string]any{"role": "user", "content": s}} }
	ok := map[string]any{"model": "api-door", "messages": user("hello")}
	cases := []struct {
		name, tok string
		body      any
		status    int
		code      string
		param     string
	}{
		{"no token", "", ok, 401, "missing_api_key", ""},
		{"wrong token", "sgt_not-a-token-of-ours-PLANTED", ok, 401, "invalid_api_key", ""},
		{"model not allowed", doorNarrow, map[string]any{"model": "api-other", "messages": user("x")}, 403, "model_not_allowed", "model"},
		{"no such model", doorToken, map[string]any{"model": "gpt-5", "messages": user("x")}, 404, "model_not_found", "model"},
		{"over the limit", doorToken, map[string]any{"model": "api-door", "messages": user(strings.Repeat("x", 4096))}, 413, "request_too_large", ""},
		{"not JSON", doorToken, "{model: api-door", 400, "", ""},
		{"no model", doorToken, map[string]any{"messages": user("x")}, 400, "", "model"},
		{"no messages", doorToken, map[string]any{"model": "api-door"}, 400, "", "messages"},
		{"earlier turns of no conversation", doorToken, map[string]any{"model": "api-door", "messages": []any{
			map[string]any{"role": "user", "content": "hi"}, map[string]any{"role": "assistant", "content": "hello"},
			map[string]any{"role": "user", "content": "and?"}}}, 400, "conversation_not_found", "messages"}, // turns no task of this token answered (issue 51)
		{"an image part", doorToken, map[string]any{"model": "api-door", "messages": []any{map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "image_url", "image_url": map[string]any{"url": "http://x/y.png"}}}}}}, 400, "", "messages[0].content[0]"},
		{"n: 2", doorToken, map[string]any{"model": "api-door", "n": 2, "messages": user("x")}, 400, "", "n"},
	}
	for _, c := range cases {
		status, _, m := r.doorDo(http.MethodPost, "/v1/chat/completions", c.tok, c.body)
		if status != c.status {
			t.Errorf("%s: status %d, want %d: %v", c.name, status, c.status, m)
			continue
		}
		_, code, param := openAIError(t, c.name, m)
		if (c.code != "" && code != c.code) || param != c.param {
			t.Errorf("%s: code %q param %q, want %q %q", c.name, code, param, c.code, c.param)
		}
	}
	// The Go SDK reads the shape.
	_, err := sdkAsk(t.Context(), r.sdk(doorNarrow), doorParams("api-other", "", "x"), false)
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 403 || oe.Code != "model_not_allowed" || oe.Param != "model" {
		t.Errorf("go sdk, a model not allowed: %v", err)
	}
	// A task the model refuses (400: permanent) is 422 with its class;
	// streamed, the stream ends with an error event, which the SDK raises.
	status, _, m := r.doorDo(http.MethodPost, "/v1/chat/completions", doorToken, map[string]any{"model": "api-door", "messages": user("[[status=400]] refused upstream")})
	if _, code, _ := openAIError(t, "permanent", m); status != 422 || code != "task_permanent" {
		t.Errorf("a permanent failure: %d %v, want 422 task_permanent", status, m)
	}
	_, err = sdkAsk(t.Context(), r.sdk(doorToken), doorParams("api-door", "", "[[status=400]] refused upstream, streamed"), true)
	if err == nil || !strings.Contains(err.Error(), "task_permanent") {
		t.Errorf("a permanent failure, streamed: %v", err)
	}
	// The narrow token's rate is 2/h, and every request counts: the two
	// above spent it, so the next is 429 with Retry-After.
	var last int
	var hdr http.Header
	for range 3 {
		last, hdr, _ = r.doorDo(http.MethodGet, "/v1/models", doorNarrow, nil)
	}
	if last != 429 || hdr.Get("Retry-After") == "" {
		t.Errorf("over the token's rate: status %d Retry-After %q, want 429 with one", last, hdr.Get("Retry-After"))
	}
	// Over the lane's queue (maxQueue 2): the api lane paused, two tasks
	// wait, the third request is 429 with Retry-After.
	r.CLI("pause", "api")
	r.Submit(rig.Task{ID: "q1", Model: "api-door", Content: "one"}, rig.Task{ID: "q2", Model: "api-door", Content: "two"})
	status, hdr, m = r.doorDo(http.MethodPost, "/v1/chat/completions", doorToken, ok)
	if _, code, _ := openAIError(t, "queue full", m); status != 429 || hdr.Get("Retry-After") == "" || code != "queue_full" {
		t.Errorf("over the queue: status %d Retry-After %q code %q", status, hdr.Get("Retry-After"), code)
	}
	d.Stop()
	r.checkNoToken(d.LogText())
}

// The JSON task API: submit (one, many; Idempotency-Key and taskId return
// the task already made), read, wait, cancel, retry; the same checks as
// `spoolgate submit`, and the tasks are ordinary tasks.
func TestE2E_Door_TaskAPI(t *testing.T) {
	t.Parallel()
	r, d := doorAPIRig(t, "")
	task := map[string]any{"model": "api-door", "prompt": "Be brief.", "content": "[[duration=20s]] task api one"}
	status, _, m := r.doorDo(http.MethodPost, "/api/v1/tasks", doorToken, task, "Idempotency-Key", "k1")
	if status != 201 {
		t.Fatalf("submit: %d %v", status, m)
	}
	id := m["tasks"].([]any)[0].(map[string]any)["taskId"].(string)
	status, _, m = r.doorDo(http.MethodPost, "/api/v1/tasks", doorToken, task, "Idempotency-Key", "k1")
	got := m["tasks"].([]any)[0].(map[string]any)
	if status != 200 || got["taskId"] != id || got["joined"] != true {
		t.Errorf("the same key again: %d %v, want 200 joined %s", status, m, id)
	}
	// The same key, another content: refused.
	other := map[string]any{"model": "api-door", "content": "something else"}
	if status, _, m = r.doorDo(http.MethodPost, "/api/v1/tasks", doorToken, other, "Idempotency-Key", "k1"); status != 422 {
		t.Errorf("the same key, another request: %d %v, want 422", status, m)
	}
	status, _, m = r.doorDo(http.MethodGet, "/api/v1/tasks/api/"+id+"/wait?timeout=20s", doorToken, nil)
	if status != 200 || m["state"] != "success" || m["result"] != doorAPIAnswer("[[duration=20s]] task api one") || m["batch"] != "e2e" {
		t.Errorf("wait: %d %v", status, m)
	}
	if n := len(rig.RequestTimes(r.api, "[[duration=20s]] task api one")); n != 1 {
		t.Errorf("the stand-in saw the task %d times, want once", n)
	}
	// Many at once, all checked first: one bad model refuses them all. A
	// given taskId is the token's own: m1 is door-e2e-m1.
	const m1, m2 = "door-e2e-m1", "door-e2e-m2"
	bad := map[string]any{"tasks": []any{map[string]any{"taskId": "m1", "model": "api-door", "content": "x"},
		map[string]any{"taskId": "m2", "model": "nope", "content": "y"}}}
	if status, _, m = r.doorDo(http.MethodPost, "/api/v1/tasks", doorToken, bad); status != 400 || r.L.Locate(taskfile.KindAPI, m1) != "" {
		t.Errorf("a batch with a bad model: %d %v; m1 in %q", status, m, r.L.Locate(taskfile.KindAPI, m1))
	}
	r.CLI("pause", "api")
	many := map[string]any{"tasks": []any{map[string]any{"taskId": "m1", "model": "api-door", "content": "x", "batch": "b1"},
		map[string]any{"taskId": "m2", "model": "api-door", "content": "y", "batch": "b1"}}}
	if status, _, m = r.doorDo(http.MethodPost, "/api/v1/tasks", doorToken, many); status != 201 || len(m["tasks"].([]any)) != 2 || m["tasks"].([]any)[0].(map[string]any)["taskId"] != m1 {
		t.Errorf("two tasks: %d %v", status, m)
	}
	if status, _, m = r.doorDo(http.MethodPost, "/api/v1/tasks", doorToken, many); status != 200 {
		t.Errorf("the same taskIds again: %d %v, want 200 (joined)", status, m)
	}
	// Cancel one while the lane is paused, retry it, then let it run.
	if status, _, m = r.doorDo(http.MethodPost, "/api/v1/tasks/api/"+m1+"/cancel", doorToken, nil); status != 202 {
		t.Errorf("cancel: %d %v", status, m)
	}
	if tk := r.Final(taskfile.KindAPI, m1, 10*time.Second); tk.State != taskfile.StateCanceled {
		t.Errorf("m1 after cancel: %s", tk.State)
	}
	if status, _, m = r.doorDo(http.MethodPost, "/api/v1/tasks/api/"+m1+"/retry", doorToken, nil); status != 202 {
		t.Errorf("retry: %d %v", status, m)
	}
	if status, _, m = r.doorDo(http.MethodPost, "/api/v1/tasks/api/"+m2+"/retry", doorToken, nil); status != 409 {
		t.Errorf("retry of a pending task: %d %v, want 409", status, m)
	}
	r.CLI("resume", "api")
	for _, id := range []string{m1, m2} {
		status, _, m = r.doorDo(http.MethodGet, "/api/v1/tasks/api/"+id+"/wait?timeout=20s", doorToken, nil)
		if status != 200 || m["state"] != "success" {
			t.Errorf("%s: %d %v", id, status, m)
		}
	}
	if status, _, m = r.doorDo(http.MethodGet, "/api/v1/tasks/api/"+m1, doorToken, nil); status != 200 || m["batch"] != "b1" {
		t.Errorf("read m1: %d %v", status, m)
	}
	// Another token's task is none of the narrow token's (e2e_doorrights_test.go).
	if status, _, m = r.doorDo(http.MethodGet, "/api/v1/tasks/api/"+m1, doorNarrow, nil); status != 404 {
		t.Errorf("the narrow token reads e2e's m1: %d %v, want 404", status, m)
	}
	if status, _, _ = r.doorDo(http.MethodGet, "/api/v1/tasks/api/nothing", doorToken, nil); status != 404 {
		t.Errorf("no such task: %d", status)
	}
	if out := r.CLI("results", "--batch", "b1"); strings.Count(out, `"state":"success"`) != 2 {
		t.Errorf("results --batch b1:\n%s", out)
	}
	// The token's cancel and retry, and the command line's pause and resume, are audited (e2e_audit_test.go).
	checkAuditDoors(t, r.Rig, "cli:USER@HOST:pause door:e2e:cancel door:e2e:retry cli:USER@HOST:resume")
	d.Stop()
	r.checkNoToken(d.LogText())
}
