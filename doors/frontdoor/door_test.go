package frontdoor

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseChat(t *testing.T) {
	ok := func(body string) chatTask {
		t.Helper()
		ct, err := parseChat([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return ct
	}
	ct := ok(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"temperature":null,"logprobs":false,
		"response_format":{"type": "text"},"user":"u-7","parallel_tool_calls":true,
		"messages":[{"role":"system","content":"Be brief."},{"role":"developer","content":"In French."},
		{"role":"user","content":[{"type":"text","text":"Hello, "},{"type":"text","text":"world"}]}]}`)
	if ct.Model != "m" || ct.Prompt != "Be brief.\n\nIn French." || ct.Content != "Hello, world" || !ct.Stream || !ct.Usage {
		t.Errorf("parsed %+v", ct)
	}
	// A conversation: the earlier turns in pairs, the last user message
	// the content.
	mt := ok(`{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"u1"},{"role":"assistant","content":"a1"},
		{"role":"user","content":"u2"},{"role":"assistant","content":"a2"},{"role":"user","content":"u3"}]}`)
	if mt.Prompt != "S" || mt.Content != "u3" || len(mt.Turns) != 2 || mt.Turns[0] != (taskfile.Turn{Content: "u1", Result: "a1"}) || mt.Turns[1] != (taskfile.Turn{Content: "u2", Result: "a2"}) {
		t.Errorf("multi-turn parsed %+v", mt)
	}
	// The sampling fields are the task's own (the model's config decides
	// in Door.chat whether it takes them), by their task-file names.
	st := ok(`{"model":"m","temperature":0.2,"max_completion_tokens":50,"stop":"END","seed":null,"messages":[{"role":"user","content":"a"}]}`)
	if st.Sampling == nil || *st.Sampling.Temperature != 0.2 || *st.Sampling.MaxTokens != 50 || len(st.Sampling.Stop) != 1 || st.Sampling.Seed != nil ||
		st.samplingNames["maxTokens"] != "max_completion_tokens" || strings.Join(st.Sampling.Set(), ",") != "temperature,maxTokens,stop" {
		t.Errorf("sampling %+v, names %v", st.Sampling, st.samplingNames)
	}
	for body, param := range map[string]string{
		`{"messages":[{"role":"user","content":"x"}]}`:                                                "model",
		`{"model":"m","messages":[]}`:                                                                 "messages",
		`{"model":"m","messages":[{"role":"system","content":"x"}]}`:                                  "messages",
		`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`:      "messages[1]",
		`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`: "messages",
		`{"model":"m","messages":[{"role":"assistant","content":"b"},{"role":"user","content":"a"}]}`: "messages[0]",
		`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"tool","content":"b"}]}`:      "messages[1]",
		`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"system","content":"b"}]}`:    "messages[1]",
		`{"model":"m","messages":[{"role":"robot","content":"a"}]}`:                                   "messages[0].role",
		`{"model":"m","messages":[{"role":"user"}]}`:                                                  "messages[0].content",
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url"}]}]}`:                 "messages[0].content[0]",
		`{"model":"m","n":3,"messages":[{"role":"user","content":"a"}]}`:                              "n",
		`{"model":"m","tools":[{"type":"function"}],"messages":[{"role":"user","content":"a"}]}`:      "tools",
		`{"model":"m","messages":[{"role":"user","content":"a"}]} {}`:                                 "",
		// Every field honoured or refused by name (issue 52).
		`{"model":"m","logprobs":true,"messages":[{"role":"user","content":"a"}]}`:                                                                         "logprobs",
		`{"model":"m","response_format":{"type":"xml"},"messages":[{"role":"user","content":"a"}]}`:                                                        "response_format.type",
		`{"model":"m","response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":7}}},"messages":[{"role":"user","content":"a"}]}`: "response_format.json_schema.schema",
		`{"model":"m","temperature":"hot","messages":[{"role":"user","content":"a"}]}`:                                                                     "temperature",
		`{"model":"m","stop":[1],"messages":[{"role":"user","content":"a"}]}`:                                                                              "stop",
		`{"model":"m","frobnicate":1,"messages":[{"role":"user","content":"a"}]}`:                                                                          "frobnicate",
		`[1,2]`: "",
	} {
		_, err := parseChat([]byte(body))
		if err == nil || err.Status != http.StatusBadRequest || err.Param != param {
			t.Errorf("%s: %+v, want 400 with param %q", body, err, param)
		}
	}
}

// FuzzParseChat: any body is parsed or refused with a 400, never a panic;
// what it accepts has a model and a user message.
func FuzzParseChat(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"system","content":"p"},{"role":"user","content":"c"}]}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"stream":true}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":null}]}`))
	f.Add([]byte(`{"model":"","messages":{}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ct, err := parseChat(body)
		if err != nil {
			if err.Status != http.StatusBadRequest || err.Msg == "" {
				t.Fatalf("refusal %+v", err)
			}
			return
		}
		if ct.Model == "" {
			t.Fatalf("accepted without a model: %q", body)
		}
	})
}

func TestPieces(t *testing.T) {
	s := strings.Repeat("é漢", 3000)
	var b strings.Builder
	for _, p := range pieces(s, 4096) {
		if len(p) > 4096 || !utf8.ValidString(p) {
			t.Fatalf("piece of %d bytes, valid %t", len(p), utf8.ValidString(p))
		}
		b.WriteString(p)
	}
	if b.String() != s {
		t.Fatal("pieces do not join to the text")
	}
	if got := pieces("\x80\x80\x80\x80", 2); len(got) != 2 {
		t.Errorf("not UTF-8: %q", got)
	}
}

func TestToken(t *testing.T) {
	tok, hash := NewToken()
	tok2, _ := NewToken()
	if !strings.HasPrefix(tok, TokenPrefix) || len(tok) < 40 || tok == tok2 || hash != HashToken(tok) || strings.Contains(hash, tok) {
		t.Errorf("token %q hash %q", tok, hash)
	}
	a := &token{name: "cms", hash: hash}
	b := &token{name: "cms", hash: HashToken(tok2)}
	if keyedID(a, "k") != keyedID(a, "k") || keyedID(a, "k") == keyedID(a, "k2") || keyedID(a, "k") == keyedID(b, "k") {
		t.Error("keyedID: the same key of the same token must name one task, and only that")
	}
	if id := keyedID(a, "k"); !taskfile.ValidTaskID(id) {
		t.Errorf("keyedID %q is not a taskId", id)
	}
}

// newTestDoor is a door over a spool in a temp folder: no daemon runs.
func newTestDoor(t *testing.T, extra string) (*Door, string) {
	t.Helper()
	return newTestDoorWith(t, "", "", extra)
}

// newTestDoorWith is newTestDoor with more keys in token cms's entry
// (", allow: [output]") and more tokens (lines of `tokens:`).
func newTestDoorWith(t *testing.T, cms, tokens, extra string) (*Door, string) {
	t.Helper()
	dir := t.TempDir()
	tok, hash := NewToken()
	cfg, err := config.ParseConfig([]byte(`spool: ` + filepath.Join(dir, "spool") + `
models:
  - {name: writer, kind: api, baseURL: "http://127.0.0.1:9/v1"}
  - {name: other, kind: api, baseURL: "http://127.0.0.1:9/v1"}
tokens:
  cms: {hash: "` + hash + `", models: [writer]` + cms + `}
` + tokens + extra))
	if err != nil {
		t.Fatal(err)
	}
	return New(spool.NewStore(cfg, nil), nil), tok
}

func serve(d *Door, method, path, tok, body string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.RemoteAddr = "127.0.0.1:5555"
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	d.ServeHTTP(w, req)
	return w
}

// A task API submit drops one file in the lane's incoming/, through the
// Store; the same Idempotency-Key drops nothing more.
func TestDoor_SubmitDropsOnce(t *testing.T) {
	d, tok := newTestDoor(t, "")
	body := `{"model":"writer","content":"hello"}`
	for i, want := range []int{http.StatusCreated, http.StatusOK} {
		w := serve(d, http.MethodPost, "/api/v1/tasks", tok, body, "Idempotency-Key", "abc")
		if w.Code != want {
			t.Fatalf("submit %d: %d %s", i, w.Code, w.Body)
		}
	}
	ents, _ := os.ReadDir(d.st.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming))
	if len(ents) != 1 {
		t.Fatalf("incoming holds %d files, want 1", len(ents))
	}
	data, _ := os.ReadFile(filepath.Join(d.st.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming), ents[0].Name()))
	if strings.Contains(string(data), tok) || !strings.Contains(string(data), "batch: cms") {
		t.Errorf("the task file:\n%s", data)
	}
	// Another model than the token's: refused; from another machine: refused.
	if w := serve(d, http.MethodPost, "/api/v1/tasks", tok, `{"model":"other","content":"x"}`); w.Code != http.StatusForbidden {
		t.Errorf("other model: %d %s", w.Code, w.Body)
	}
	req := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
	req.RemoteAddr = "192.0.2.7:5555"
	req.Header.Set("Authorization", "Bearer "+tok)
	w := httptest.NewRecorder()
	d.ServeHTTP(w, req)
	var e map[string]map[string]any
	if w.Code != http.StatusForbidden || json.Unmarshal(w.Body.Bytes(), &e) != nil || e["error"]["code"] != "remote_refused" {
		t.Errorf("a remote peer: %d %s", w.Code, w.Body)
	}
}

func TestConfig_DoorKeys(t *testing.T) {
	_, hash := NewToken()
	base := "models:\n  - {name: writer, kind: api, baseURL: \"http://127.0.0.1:9/v1\"}\n"
	for _, bad := range []string{
		"tokens:\n  cms: {hash: \"sgt_plain-token\", models: [writer]}\n",
		"tokens:\n  cms: {hash: \"" + hash + "\"}\n",
		"tokens:\n  cms: {hash: \"" + hash + "\", models: [nope]}\n",
		"tokens:\n  cms: {hash: \"" + hash + "\", models: [writer], rate: \"fast\"}\n",
		"tokens:\n  \"a b\": {hash: \"" + hash + "\", models: [writer]}\n",
		"door: {keepAlive: 30s}\n",
		"door: {maxBody: 10}\n",
		"door: {listen: x}\n",
	} {
		if _, err := config.ParseConfig([]byte(base + bad)); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
	c, err := config.ParseConfig([]byte(base + "tokens:\n  cms: {hash: \"" + hash + "\", models: [\"*\"], rate: 30/m}\n"))
	if err != nil || c.Door.MaxBody != taskfile.MaxTaskSize || c.Door.KeepAlive.D().Seconds() != 15 || !c.Tokens["cms"].Allows("writer") {
		t.Errorf("defaults: %+v, %v", c.Door, err)
	}
}

// A record planted in done/ under a key's taskId (unsealed: no daemon of
// this installation wrote it, so no token's) is never answered as the
// task's result: the key's submit is refused as a taken id.
func TestDoor_PlantedResultRefused(t *testing.T) {
	d, tok := newTestDoor(t, "")
	tk := d.tokens[strings.TrimPrefix(HashToken(tok), config.TokenHashPrefix)]
	id := keyedID(tk, "k-planted")
	planted := &taskfile.Task{TaskID: id, Model: "writer", Content: "hello", Batch: "cms", State: taskfile.StateSuccess, Attempt: 1, Result: "PLANTED answer"}
	data, err := planted.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.st.Layout.Create(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.st.Layout.TaskPath(taskfile.KindAPI, taskfile.DirDone, id), data, 0o600); err != nil {
		t.Fatal(err)
	}
	w := serve(d, http.MethodPost, "/v1/chat/completions", tok, `{"model":"writer","messages":[{"role":"user","content":"hello"}]}`, "Idempotency-Key", "k-planted")
	if w.Code != http.StatusConflict || strings.Contains(w.Body.String(), "PLANTED") {
		t.Errorf("planted record: %d %s", w.Code, w.Body)
	}
}

func TestFailedError(t *testing.T) {
	for class, want := range map[taskfile.ErrorClass]int{
		taskfile.ClassInvalid: 400, taskfile.ClassPermanent: 422, taskfile.ClassTransient: 502, taskfile.ClassAccount: 502,
		taskfile.ClassStale: 500, taskfile.ClassEnvironment: 500, taskfile.ClassCanceled: 410,
	} {
		e := failedError(&taskfile.Task{TaskID: "x", ErrorClass: class, Error: "why"}, taskfile.StateFailed)
		if e.Status != want || e.Code != "task_"+string(class) || !strings.Contains(e.Msg, "why") {
			t.Errorf("%s: %+v, want %d", class, e, want)
		}
	}
	if e := failedError(&taskfile.Task{TaskID: "x"}, taskfile.StateCanceled); e.Status != http.StatusGone {
		t.Errorf("canceled: %+v", e)
	}
}
