//go:build unix

package doors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/spoolgate/spoolgate/doors/frontdoor"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 41's acceptance: real clients written by others (the official Go
// SDK, github.com/openai/openai-go/v3, and the official npm `openai`
// package in examples/doorclient) against `spoolgate run` on 127.0.0.1,
// on an API model (examples/apistand) and a web model (a real Chromium on
// examples/chatstand's Markdown page).

// The tokens planted in the config as hashes; they must reach no file
// under the spool and no line of the daemon's log.
const (
	doorToken  = "sgt_e2e-door-PLANTED-token-all-models-7c1d"
	doorNarrow = "sgt_e2e-door-PLANTED-token-api-only-55e0"
)

// doorRig is a daemon's rig with the front door on a fixed port (a retry
// after a restart goes to the same address, as a client's would).
type doorRig struct {
	*rig.Sites
	web  *chatstand.Server
	api  *apistand.Server
	base string // http://127.0.0.1:PORT
}

// doorTail is the tokens: and door: sections.
func doorTail(door string) string {
	return fmt.Sprintf(`tokens:
  e2e: {hash: %q, models: ["*"]}
  narrow: {hash: %q, models: [api-door], rate: "2/h"}
door: {keepAlive: 300ms%s}
`, frontdoor.HashToken(doorToken), frontdoor.HashToken(doorNarrow), door)
}

// newDoorRig starts the stand-ins and writes the config: web model
// web-door on the Markdown chat page (one signed-in session), API model
// api-door on apistand.
func newDoorRig(t *testing.T, scale float64, door string) *doorRig {
	t.Helper()
	api := rig.APIStand(t, apistand.Options{RequireKey: rig.APIKey, Scale: scale, Answer: func(user string) (string, bool) {
		if strings.Contains(user, "as json please") { // a model that answers in JSON, in a fence
			return "```json\n" + `{"title": "Spools", "tags": ["thread"]}` + "\n```", true
		}
		return "", false
	}})
	addr := testkit.FreeAddr(t)
	models := "  - {name: web-door, kind: web, site: %[1]s, needEmptyPrompt: true}\n" +
		fmt.Sprintf("  - {name: api-door, kind: api, baseURL: %q, model: stand-in, apiKeyEnv: E2E_API_KEY, timeout: 20s}\n", api.URL()) +
		fmt.Sprintf("  - {name: api-tunable, kind: api, baseURL: %q, model: stand-in, apiKeyEnv: E2E_API_KEY, timeout: 20s, requestFields: [temperature, maxTokens]}\n", api.URL())
	r := rig.NewSites(t, rig.Opts{TaskTimeout: 2 * time.Minute, MaxRetries: 3, HTTP: addr, Tail: doorTail(door)}, scale,
		&rig.Site{Name: "md", Opts: chatstand.Options{Renderer: "markdown-it"}, Keys: rig.OnceKeys(), Model: models})
	r.Env = append(r.Env, "E2E_API_KEY="+rig.APIKey)
	return &doorRig{Sites: r, web: r.Site["md"].Stand, api: api, base: "http://" + addr}
}

// startDoor starts the daemon and waits until it serves the door: its
// READY=1 (onceStart) comes after the console's listener is bound.
func (r *doorRig) startDoor(name string) rig.OnceDaemon {
	r.T.Helper()
	return rig.OnceStart(r.Sites, name)
}

// sdk is an official Go SDK client of the door with tok, no retries of
// its own: the tests retry where they mean to.
func (r *doorRig) sdk(tok string) openai.Client {
	return openai.NewClient(option.WithBaseURL(r.base+"/v1/"), option.WithAPIKey(tok), option.WithMaxRetries(0))
}

func doorParams(model, prompt, content string) openai.ChatCompletionNewParams {
	var msgs []openai.ChatCompletionMessageParamUnion
	if prompt != "" {
		msgs = append(msgs, openai.SystemMessage(prompt))
	}
	return openai.ChatCompletionNewParams{Model: model, Messages: append(msgs, openai.UserMessage(content))}
}

// sdkAsk sends one request with the Go SDK, streamed or not, and returns
// the answer's text.
func sdkAsk(ctx context.Context, c openai.Client, p openai.ChatCompletionNewParams, stream bool, opts ...option.RequestOption) (string, error) {
	if !stream {
		res, err := c.Chat.Completions.New(ctx, p, opts...)
		if err != nil {
			return "", err
		}
		return res.Choices[0].Message.Content, nil
	}
	s := c.Chat.Completions.NewStreaming(ctx, p, opts...)
	defer s.Close()
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	if len(acc.Choices) == 0 {
		return "", errors.New("the stream ended without a choice")
	}
	return acc.Choices[0].Message.Content, nil
}

// doorAPIAnswer is apistand's answer to content.
func doorAPIAnswer(content string) string {
	_, answer := apistand.ParseDirectives(content)
	return answer
}

// nodeCall is one call of examples/doorclient/client.mjs.
type nodeCall struct {
	Model   string `json:"model"`
	Prompt  string `json:"prompt,omitempty"`
	Content string `json:"content"`
	Stream  bool   `json:"stream"`
	Key     string `json:"key,omitempty"`
}

type nodeResult struct {
	Text   string `json:"text"`
	Chunks int    `json:"chunks"`
	Error  *struct {
		Status int    `json:"status"`
		Code   string `json:"code"`
		Param  string `json:"param"`
	} `json:"error"`
}

// runNode runs the npm SDK's client with calls and returns its results.
func (r *doorRig) runNode(tok string, calls []nodeCall) []nodeResult {
	r.T.Helper()
	var res []nodeResult
	r.runNodeScript("client.mjs", tok, calls, &res)
	if len(res) != len(calls) {
		r.T.Fatalf("node client gave %d results for %d calls", len(res), len(calls))
	}
	return res
}

// runNodeScript runs one script of examples/doorclient against the door
// with tok, arg as its one JSON argument, and decodes what it prints into
// out. Without node or the packages the test fails (CI) or, on a
// developer machine that says SPOOLGATE_NO_NPM=1, skips.
func (r *doorRig) runNodeScript(script, tok string, arg, out any) {
	r.T.Helper()
	dir, err := filepath.Abs("../../examples/doorclient")
	if err != nil {
		r.T.Fatal(err)
	}
	node, nerr := exec.LookPath("node")
	_, merr := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json"))
	if missing := errors.Join(nerr, merr); missing != nil {
		if os.Getenv("SPOOLGATE_NO_NPM") != "" && os.Getenv("CI") != "true" {
			r.T.Skipf("SPOOLGATE_NO_NPM is set and the npm openai SDK is absent: %v", missing)
		}
		r.T.Fatalf("the npm openai SDK is absent (%v): install node and npm, then run `make doorclient` (npm ci in examples/doorclient)", missing)
	}
	a, _ := json.Marshal(arg)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, script), string(a))
	cmd.Env = append(os.Environ(), "DOOR_URL="+r.base+"/v1", "DOOR_TOKEN="+tok)
	var errb strings.Builder
	cmd.Stderr = &errb
	b, err := cmd.Output()
	if err != nil {
		r.T.Fatalf("node %s: %v\n%s", script, err, errb.String())
	}
	if err := json.Unmarshal(b, out); err != nil {
		r.T.Fatalf("node %s printed %q: %v", script, b, err)
	}
}

// checkNoToken fails if a token is in a file under the spool, in the
// config, or in a daemon's log (every *.stderr of the rig: a killed
// daemon's log is kept under its name), or in logs.
func (r *doorRig) checkNoToken(logs ...string) {
	r.T.Helper()
	kept, _ := filepath.Glob(filepath.Join(r.Dir, "*.stderr"))
	for _, p := range append(kept, r.CfgPath) {
		b, _ := os.ReadFile(p)
		logs = append(logs, string(b))
	}
	if len(logs) < 2 {
		r.T.Errorf("no daemon log to check")
	}
	for _, tok := range []string{doorToken, doorNarrow, "PLANTED"} {
		if hits, _ := rig.FilesContaining(r.T, r.L.Root, tok); len(hits) > 0 {
			r.T.Errorf("a token (%q) is in %v", tok, hits)
		}
		for _, l := range logs {
			if strings.Contains(l, tok) {
				r.T.Errorf("a token (%q) is in a daemon's log or the config", tok)
			}
		}
	}
}

// The official Go and Node SDKs, streaming and not, on the API model and
// the web model: the answers are the stand-ins'. A request retried with
// its Idempotency-Key gets the same answer, and the stand-in saw it once.
// The tasks are ordinary tasks of batch e2e (the token's name).
func TestE2E_Door_SDKs(t *testing.T) {
	t.Parallel()
	r := newDoorRig(t, 0.01, "")
	d := r.startDoor("door")
	ctx := context.Background()
	c := r.sdk(doorToken)
	type ask struct {
		model, prompt, content string
		stream                 bool
	}
	var asks []ask
	for _, model := range []string{"api-door", "web-door"} {
		for _, stream := range []bool{false, true} {
			asks = append(asks, ask{model, "Be brief.", fmt.Sprintf("[[duration=30s]] go sdk %s stream=%t", model, stream), stream})
		}
	}
	want := func(a ask) string {
		if a.model == "api-door" {
			return doorAPIAnswer(a.content)
		}
		return chatstand.AnswerFor(a.content)
	}
	for _, a := range asks {
		got, err := sdkAsk(ctx, c, doorParams(a.model, a.prompt, a.content), a.stream)
		if err != nil || got != want(a) {
			t.Errorf("go sdk %s stream=%t: %q, %v; want %q", a.model, a.stream, got, err, want(a))
		}
	}
	// The same key twice: one task, one request to the stand-in.
	keyed := "[[duration=30s]] go sdk keyed request"
	for i := range 2 {
		got, err := sdkAsk(ctx, c, doorParams("api-door", "", keyed), i == 1, option.WithHeader("Idempotency-Key", "go-key-1"))
		if err != nil || got != doorAPIAnswer(keyed) {
			t.Errorf("keyed request %d: %q, %v", i, got, err)
		}
	}
	if n := len(rig.RequestTimes(r.api, keyed)); n != 1 {
		t.Errorf("the API stand-in saw the keyed prompt %d times, want once", n)
	}

	// Fields the door does not honour are refused by name (issue 52),
	// through the SDK's own typed parameters, and reach no model.
	for param, set := range map[string]func(*openai.ChatCompletionNewParams){
		"temperature": func(p *openai.ChatCompletionNewParams) { p.Temperature = openai.Float(0.2) },
		"max_tokens":  func(p *openai.ChatCompletionNewParams) { p.MaxTokens = openai.Int(50) },
		"logprobs":    func(p *openai.ChatCompletionNewParams) { p.Logprobs = openai.Bool(true) },
		"seed":        func(p *openai.ChatCompletionNewParams) { p.Seed = openai.Int(1) },
	} {
		content := "[[duration=30s]] go sdk refused " + param
		p := doorParams("api-door", "", content)
		set(&p)
		_, err := c.Chat.Completions.New(ctx, p)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Param != param {
			t.Errorf("%s: %v; want a 400 naming the field", param, err)
		}
		if n := len(rig.RequestTimes(r.api, content)); n != 0 {
			t.Errorf("%s: the API stand-in saw the refused request %d times", param, n)
		}
	}

	// A model whose config allows them takes the sampling fields: they
	// reach the API (the stand-in records the request); one it does not
	// list is still refused by name.
	p := doorParams("api-tunable", "", "[[duration=30s]] go sdk tuned")
	p.Temperature, p.MaxTokens = openai.Float(0.3), openai.Int(40)
	if got, err := sdkAsk(ctx, c, p, false); err != nil || got != doorAPIAnswer("[[duration=30s]] go sdk tuned") {
		t.Errorf("tuned: %q, %v", got, err)
	}
	var tuned *apistand.Request
	for _, q := range r.api.Requests() {
		if strings.Contains(q.User, "go sdk tuned") {
			tuned = &q
		}
	}
	if tuned == nil || tuned.Temperature == nil || *tuned.Temperature != 0.3 || tuned.MaxTokens != 40 {
		t.Errorf("the API stand-in did not get temperature 0.3 and max_tokens 40: %+v", tuned)
	}
	p = doorParams("api-tunable", "", "[[duration=30s]] go sdk seeded")
	p.Seed = openai.Int(9)
	var seedErr *openai.Error
	if _, err := c.Chat.Completions.New(ctx, p); !errors.As(err, &seedErr) || seedErr.StatusCode != http.StatusBadRequest || seedErr.Param != "seed" {
		t.Errorf("seed on api-tunable: %v; want a 400 naming seed", err)
	}

	doorSchemaChecks(ctx, t, r, c)

	// The npm SDK.
	var calls []nodeCall
	for _, a := range asks {
		calls = append(calls, nodeCall{Model: a.model, Prompt: a.prompt, Content: strings.Replace(a.content, "go sdk", "node sdk", 1), Stream: a.stream})
	}
	webKeyed := "[[duration=30s]] node sdk keyed web request"
	calls = append(calls, nodeCall{Model: "web-door", Content: webKeyed, Stream: true, Key: "node-key-1"},
		nodeCall{Model: "web-door", Content: webKeyed, Key: "node-key-1"})
	res := r.runNode(doorToken, calls)
	for i, c := range calls {
		w := want(ask{model: c.Model, content: c.Content})
		if res[i].Error != nil || res[i].Text != w {
			t.Errorf("node sdk %s stream=%t: %+v; want %q", c.Model, c.Stream, res[i], w)
		}
		if c.Stream && res[i].Chunks < 2 {
			t.Errorf("node sdk %s stream: %d chunks", c.Model, res[i].Chunks)
		}
	}
	if n := r.web.SendsOf(webKeyed); n != 1 {
		t.Errorf("the chat stand-in received the keyed prompt %d times, want once", n)
	}
	if m := r.web.MaxPerAccount()["demo"]; m != 1 {
		t.Errorf("the session ran %d generations at once, want 1", m)
	}
	// Ordinary tasks: `results` lists them in the token's batch.
	out := r.CLI("results", "--batch", "e2e")
	if n := strings.Count(out, `"state":"success"`); n != 2*len(asks)+5 { // and the tuned and JSON answers
		t.Errorf("results --batch e2e: %d successes, want %d:\n%s", n, 2*len(asks)+5, out)
	}
	d.Stop()
	r.checkNoToken(d.LogText())
}

// Kill the daemon (SIGKILL) while a streamed request waits its turn, and
// again while it runs: the client's stream breaks; its retry with the same
// Idempotency-Key, once the daemon is back, gets the one answer, and the
// chat stand-in received each prompt once.
func TestE2E_Door_KillAndRetry(t *testing.T) {
	t.Parallel()
	r := newDoorRig(t, 1, "")
	d := r.startDoor("first")
	c := r.sdk(doorToken)
	// A task dropped as a file holds the one session, so the door's task waits.
	r.Submit(rig.Task{ID: "blocker", Model: "web-door", Content: "[[duration=6s]] hold the session"})
	r.Running(taskfile.KindWeb, "blocker", 60*time.Second, func(*taskfile.Task) bool { return true })

	waiting := "[[duration=2s]] streamed, killed while it waits"
	running := "[[duration=8s]] streamed, killed while it runs"
	type out struct {
		text string
		err  error
	}
	ask := func(content, key string) chan out {
		ch := make(chan out, 1)
		go func() {
			text, err := sdkAsk(context.Background(), c, doorParams("web-door", "", content), true, option.WithHeader("Idempotency-Key", key))
			ch <- out{text, err}
		}()
		return ch
	}
	first := ask(waiting, "kill-wait")
	testkit.Wait(t, "the waiting request's task pending", 30*time.Second, func() bool {
		return r.doorTaskDir(waiting) == taskfile.DirPending
	})
	d.Kill()
	if o := <-first; o.err == nil {
		t.Fatalf("the stream went on through the kill: %q", o.text)
	}
	d = r.startDoor("second")
	if o := <-ask(waiting, "kill-wait"); o.err != nil || o.text != chatstand.AnswerFor(waiting) {
		t.Errorf("retry after the kill while waiting: %q, %v", o.text, o.err)
	}

	second := ask(running, "kill-run")
	testkit.Wait(t, "the second request's prompt sent", 60*time.Second, func() bool {
		for _, cv := range r.web.Conversations("") {
			for _, tn := range cv.Turns {
				if tn.Content == running && tn.Answer != "" {
					return true
				}
			}
		}
		return false
	})
	d.Kill()
	if o := <-second; o.err == nil {
		t.Fatalf("the stream went on through the kill: %q", o.text)
	}
	d = r.startDoor("third")
	if o := <-ask(running, "kill-run"); o.err != nil || o.text != chatstand.AnswerFor(running) {
		t.Errorf("retry after the kill while running: %q, %v", o.text, o.err)
	}
	for _, p := range []string{waiting, running} {
		if n := r.web.SendsOf(p); n != 1 {
			t.Errorf("the chat stand-in received %q %d times, want once", p, n)
		}
	}
	d.Stop()
	r.checkNoToken(d.LogText())
}

// doorTaskDir is the folder of the web task the door made for content.
func (r *doorRig) doorTaskDir(content string) string {
	for _, dir := range []string{taskfile.DirPending, taskfile.DirRunning, taskfile.DirDone} {
		ents, _ := os.ReadDir(r.L.Lane(taskfile.KindWeb, dir))
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), "door-e2e-") || !strings.HasSuffix(e.Name(), ".yaml") {
				continue
			}
			if t := r.Read(taskfile.KindWeb, dir, strings.TrimSuffix(e.Name(), ".yaml")); t != nil && t.Content == content {
				return dir
			}
		}
	}
	return ""
}
