//go:build unix

package doors

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/doors/frontdoor"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 50's front door, through `spoolgate run` with the API stand-in:
// a token sees and acts on its own tasks only, its rate counts tasks,
// the fields beyond model and content are granted by name, and no task
// replaces a file under output/ it did not write.

// The tokens of the rights rig: alpha is granted every field, beta none,
// five has a rate of 5/m.
const (
	rightsAlpha = "sgt_e2e-rights-PLANTED-alpha-3b9e"
	rightsBeta  = "sgt_e2e-rights-PLANTED-beta-8f21"
	rightsFive  = "sgt_e2e-rights-PLANTED-five-c04d"
)

// rightsRig is an API-only rig with the rights tokens.
func rightsRig(t *testing.T) (*doorRig, *rig.Daemon) {
	t.Helper()
	api := rig.APIStand(t, apistand.Options{RequireKey: rig.APIKey, Scale: 0.01})
	tail := fmt.Sprintf(`models:
  - {name: api-door, kind: api, baseURL: %q, model: stand-in, apiKeyEnv: E2E_API_KEY, timeout: 10s}
tokens:
  alpha: {hash: %q, models: ["*"], allow: [priority, output, attachments]}
  beta: {hash: %q, models: ["*"]}
  five: {hash: %q, models: ["*"], rate: "5/m"}
door: {keepAlive: 300ms}
`, api.URL(), frontdoor.HashToken(rightsAlpha), frontdoor.HashToken(rightsBeta), frontdoor.HashToken(rightsFive))
	sr := rig.New(t, rig.Opts{HTTP: "127.0.0.1:0", Tail: tail}, "E2E_API_KEY="+rig.APIKey)
	d := sr.Start()
	r := &doorRig{Sites: &rig.Sites{Rig: sr}, api: api}
	r.base = rig.StatusURL(t, d)
	return r, d
}

// asUnknown is a refusal's body with the task's id put in place of id.
func asUnknown(m map[string]any, id string) string {
	e, _ := m["error"].(map[string]any)
	return strings.ReplaceAll(fmt.Sprint(e), id, "ID")
}

// Token beta on token alpha's task id and Idempotency-Key gets exactly
// the answer of a task that does not exist: read, wait, cancel and retry
// are the same 404 with the same body; a submit with alpha's taskId, or
// its key, makes beta a task of its own (201), as an unknown one does,
// never alpha's result; and none of it touches alpha's task.
func TestE2E_DoorRights_Owner(t *testing.T) {
	t.Parallel()
	r, d := rightsRig(t)
	r.CLI("pause", "api")
	secret := map[string]any{"model": "api-door", "content": "alpha's secret brief"}
	status, _, m := r.doorDo(http.MethodPost, "/api/v1/tasks", rightsAlpha, secret, "Idempotency-Key", "ka")
	if status != 201 {
		t.Fatalf("alpha's submit: %d %v", status, m)
	}
	id := m["tasks"].([]any)[0].(map[string]any)["taskId"].(string)
	const unknown = "door-alpha-000000000000000000000000"
	ops := []struct{ method, suffix string }{
		{http.MethodGet, ""}, {http.MethodGet, "/wait?timeout=1s"}, {http.MethodPost, "/cancel"}, {http.MethodPost, "/retry"},
	}
	probe := func(when string) {
		t.Helper()
		for _, op := range ops {
			s1, _, theirs := r.doorDo(op.method, "/api/v1/tasks/api/"+id+op.suffix, rightsBeta, nil)
			s2, _, none := r.doorDo(op.method, "/api/v1/tasks/api/"+unknown+op.suffix, rightsBeta, nil)
			if s1 != 404 || s1 != s2 || asUnknown(theirs, id) != asUnknown(none, unknown) {
				t.Errorf("%s: beta %s %s on alpha's task: %d %v; on an unknown one: %d %v", when, op.method, op.suffix, s1, theirs, s2, none)
			}
		}
	}
	probe("pending")
	if dir := r.L.Locate(taskfile.KindAPI, id); dir != taskfile.DirPending {
		t.Errorf("alpha's task after beta's cancel is in %q, want pending", dir)
	}
	// Submits: alpha's taskId and alpha's key, with alpha's very content.
	for _, c := range []struct {
		name string
		task map[string]any
		hdr  []string
	}{
		{"alpha's taskId", map[string]any{"taskId": id, "model": "api-door", "content": "alpha's secret brief"}, nil},
		{"an unknown taskId", map[string]any{"taskId": unknown, "model": "api-door", "content": "alpha's secret brief"}, nil},
		{"alpha's key", secret, []string{"Idempotency-Key", "ka"}},
		{"an unknown key", secret, []string{"Idempotency-Key", "kb"}},
	} {
		status, _, m := r.doorDo(http.MethodPost, "/api/v1/tasks", rightsBeta, c.task, c.hdr...)
		got, _ := m["tasks"].([]any)
		if status != 201 || len(got) != 1 {
			t.Errorf("beta submits %s: %d %v, want 201 with a new task", c.name, status, m)
			continue
		}
		row := got[0].(map[string]any)
		if tid, _ := row["taskId"].(string); tid == id || !strings.HasPrefix(tid, "door-beta-") || row["joined"] != nil || row["result"] != "" {
			t.Errorf("beta submits %s: %v, want a task of beta's own", c.name, row)
		}
	}
	// alpha cancels its own; beta's retry of it is an unknown task's too.
	if status, _, m := r.doorDo(http.MethodPost, "/api/v1/tasks/api/"+id+"/cancel", rightsAlpha, nil); status != 202 {
		t.Fatalf("alpha's cancel: %d %v", status, m)
	}
	if tk := r.Final(taskfile.KindAPI, id, 10*time.Second); tk.State != taskfile.StateCanceled {
		t.Fatalf("alpha's task: %s", tk.State)
	}
	probe("canceled")
	if dir := r.L.Locate(taskfile.KindAPI, id); dir != taskfile.DirCanceled {
		t.Errorf("alpha's task after beta's retry is in %q, want canceled", dir)
	}
	if status, _, m := r.doorDo(http.MethodPost, "/api/v1/tasks/api/"+id+"/retry", rightsAlpha, nil); status != 202 {
		t.Fatalf("alpha's retry: %d %v", status, m)
	}
	r.CLI("resume", "api")
	status, _, m = r.doorDo(http.MethodGet, "/api/v1/tasks/api/"+id+"/wait?timeout=20s", rightsAlpha, nil)
	if status != 200 || m["state"] != "success" || m["result"] != doorAPIAnswer("alpha's secret brief") {
		t.Errorf("alpha's task, retried by alpha: %d %v", status, m)
	}
	probe("done") // done: its result is alpha's alone
	// The record says whose it is, sealed: the retry kept it.
	if tk := r.Read(taskfile.KindAPI, taskfile.DirDone, id); tk == nil || tk.DoorToken != "alpha" {
		t.Errorf("the done record's doorToken: %+v", tk)
	}
	d.Stop()
	r.checkNoRightsToken(d.LogText())
}

// A 5/m token's one request of 60 tasks is refused whole with 429
// naming the rate, and makes no task; 5 tasks pass, the 6th is 429.
func TestE2E_DoorRights_RateCountsTasks(t *testing.T) {
	t.Parallel()
	r, d := rightsRig(t)
	r.CLI("pause", "api")
	list := func(n int, tag string) map[string]any {
		var ts []any
		for i := range n {
			ts = append(ts, map[string]any{"model": "api-door", "content": fmt.Sprintf("%s %d", tag, i)})
		}
		return map[string]any{"tasks": ts}
	}
	mine := func() int {
		n := 0
		for _, dir := range []string{taskfile.DirIncoming, taskfile.DirPending} {
			ents, _ := os.ReadDir(r.L.Lane(taskfile.KindAPI, dir))
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "door-five-") {
					n++
				}
			}
		}
		return n
	}
	status, _, m := r.doorDo(http.MethodPost, "/api/v1/tasks", rightsFive, list(60, "bulk"))
	if _, code, _ := openAIError(t, "60 tasks", m); status != 429 || code != "rate_limit_exceeded" || !strings.Contains(fmt.Sprint(m), "5/m") || mine() != 0 {
		t.Fatalf("60 tasks at 5/m: %d %v; %d tasks made", status, m, mine())
	}
	if status, _, m := r.doorDo(http.MethodPost, "/api/v1/tasks", rightsFive, list(5, "five")); status != 201 || mine() != 5 {
		t.Fatalf("5 tasks: %d %v; %d tasks made", status, m, mine())
	}
	status, hdr, m := r.doorDo(http.MethodPost, "/api/v1/tasks", rightsFive, list(1, "sixth"))
	if status != 429 || hdr.Get("Retry-After") == "" || mine() != 5 {
		t.Errorf("the 6th task: %d %v Retry-After %q; %d tasks made", status, m, hdr.Get("Retry-After"), mine())
	}
	d.Stop()
	r.checkNoRightsToken(d.LogText())
}

// priority, output and attachments are refused with 403 naming the field
// for a token whose entry does not grant them, and run for one that does.
func TestE2E_DoorRights_FieldGrants(t *testing.T) {
	t.Parallel()
	r, d := rightsRig(t)
	files := filepath.Join(r.L.Root, "files")
	if err := os.MkdirAll(files, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(files, "brief.txt"), []byte("the share's confidential brief\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		field string
		set   map[string]any
	}{
		{"priority", map[string]any{"priority": "high"}},
		{"output", map[string]any{"output": "granted/out.md"}},
		{"attachments", map[string]any{"attachments": []string{"brief.txt"}}},
	}
	for _, c := range cases {
		task := map[string]any{"model": "api-door", "content": "grant " + c.field}
		for k, v := range c.set {
			task[k] = v
		}
		status, _, m := r.doorDo(http.MethodPost, "/api/v1/tasks", rightsBeta, task)
		if _, code, param := openAIError(t, c.field, m); status != 403 || code != "field_not_allowed" || param != "tasks[0]."+c.field ||
			!strings.Contains(fmt.Sprint(m), "may not set "+c.field) {
			t.Errorf("beta sets %s: %d %v, want 403 naming it", c.field, status, m)
		}
		status, _, m = r.doorDo(http.MethodPost, "/api/v1/tasks", rightsAlpha, task)
		if status != 201 {
			t.Errorf("alpha sets %s: %d %v", c.field, status, m)
			continue
		}
		id := m["tasks"].([]any)[0].(map[string]any)["taskId"].(string)
		if tk := r.Final(taskfile.KindAPI, id, 20*time.Second); tk.State != taskfile.StateSuccess {
			t.Errorf("alpha's task with %s: %s %s", c.field, tk.State, tk.Error)
		}
	}
	if got := rig.RequestTimes(r.api, "grant attachments"); len(got) != 0 {
		t.Errorf("the stand-in saw the bare content: the attachment was not sent")
	}
	for _, q := range r.api.Requests() {
		if strings.Contains(q.User, "confidential") && !strings.Contains(q.User, "grant attachments") {
			t.Errorf("the share's file reached the model in another task: %q", q.User)
		}
	}
	d.Stop()
	r.checkNoRightsToken(d.LogText())
}

// A file under output/ is never replaced by a task that did not write
// it: a second door task naming it is refused with 409 naming the file;
// a dropped task naming it fails intake, naming it; a task whose output
// someone wrote while it ran fails, naming it, its answer kept; the file
// keeps its bytes each time.
func TestE2E_DoorRights_OutputNeverReplaced(t *testing.T) {
	t.Parallel()
	r, d := rightsRig(t)
	final := filepath.Join(r.L.Output(), "reports", "final.md")
	first := map[string]any{"model": "api-door", "content": "the first report", "output": "reports/final.md"}
	status, _, m := r.doorDo(http.MethodPost, "/api/v1/tasks", rightsAlpha, first)
	if status != 201 {
		t.Fatalf("the first report: %d %v", status, m)
	}
	id := m["tasks"].([]any)[0].(map[string]any)["taskId"].(string)
	if tk := r.Final(taskfile.KindAPI, id, 20*time.Second); tk.State != taskfile.StateSuccess {
		t.Fatalf("the first report: %s %s", tk.State, tk.Error)
	}
	want := doorAPIAnswer("the first report")
	check := func(when string) {
		t.Helper()
		if b, err := os.ReadFile(final); err != nil || string(b) != want {
			t.Errorf("%s: reports/final.md = %q (%v), want the first report's answer", when, b, err)
		}
	}
	check("written")
	// Refused, naming the file: "already exists" (409 at the door), or,
	// for the moment the lane still counts the first task as running,
	// "already the output of task ..." (400): never written either way.
	taken := func(msg string) bool {
		return strings.Contains(msg, `"reports/final.md" already exists`) || strings.Contains(msg, `"reports/final.md" is already the output of task api/`+id)
	}
	// The door: refused naming the file, no task.
	second := map[string]any{"model": "api-door", "content": "a second report", "output": "reports/final.md"}
	status, _, m = r.doorDo(http.MethodPost, "/api/v1/tasks", rightsAlpha, second)
	if _, code, param := openAIError(t, "second", m); !(status == 409 && code == "output_exists" && param == "tasks[0].output" || status == 400 && param == "tasks[0]") || !taken(fmt.Sprint(m)) {
		t.Errorf("a second door task on the file: %d %v, want 409 naming it", status, m)
	}
	// A drop: refused at intake, naming the file; no model paid.
	r.Submit(rig.Task{ID: "dropped-second", Model: "api-door", Content: "a dropped second report", Output: "reports/final.md"})
	failed := r.L.Lane(taskfile.KindAPI, taskfile.DirFailed)
	var reason []byte
	testkit.WaitFS(t, "the dropped task's reason", 20*time.Second, []string{failed}, func() bool {
		reason, _ = os.ReadFile(filepath.Join(failed, taskfile.ReasonFileName("dropped-second")))
		return len(reason) > 0
	})
	if !taken(string(reason)) {
		t.Errorf("a dropped task on the file: reason %q", reason)
	}
	if n := len(rig.RequestTimes(r.api, "a dropped second report")) + len(rig.RequestTimes(r.api, "a second report")); n != 0 {
		t.Errorf("the stand-in was asked %d times for a task refused its output", n)
	}
	check("after two more tasks named it")
	// A file written on the share while the task runs: the task fails at
	// its write, naming the file, its paid answer kept; the file is kept.
	late := filepath.Join(r.L.Output(), "reports", "late.md")
	status, _, m = r.doorDo(http.MethodPost, "/api/v1/tasks", rightsAlpha, map[string]any{"model": "api-door", "content": "[[duration=200s]] a slow report", "output": "reports/late.md"})
	if status != 201 {
		t.Fatalf("the slow report: %d %v", status, m)
	}
	slow := m["tasks"].([]any)[0].(map[string]any)["taskId"].(string)
	r.Running(taskfile.KindAPI, slow, 20*time.Second, func(*taskfile.Task) bool { return true })
	if err := os.WriteFile(late, []byte("a colleague's file"), 0o640); err != nil {
		t.Fatal(err)
	}
	tk := r.Final(taskfile.KindAPI, slow, 30*time.Second)
	if tk.State != taskfile.StateFailed || !strings.Contains(tk.Error, `"reports/late.md" already exists`) || tk.Result != doorAPIAnswer("[[duration=200s]] a slow report") {
		t.Errorf("the slow report: %s %q, result %q", tk.State, tk.Error, tk.Result)
	}
	if b, _ := os.ReadFile(late); string(b) != "a colleague's file" {
		t.Errorf("reports/late.md = %q, want the colleague's file", b)
	}
	check("at the end")
	d.Stop()
	r.checkNoRightsToken(d.LogText())
}

// checkNoRightsToken: no rights token is in a file under the spool or in
// the daemon's log.
func (r *doorRig) checkNoRightsToken(logs ...string) {
	r.T.Helper()
	for _, tok := range []string{rightsAlpha, rightsBeta, rightsFive} {
		if hits, _ := rig.FilesContaining(r.T, r.L.Root, tok); len(hits) > 0 {
			r.T.Errorf("a token (%q) is in %v", tok, hits)
		}
		for _, l := range logs {
			if strings.Contains(l, tok) {
				r.T.Errorf("a token (%q) is in the log", tok)
			}
		}
	}
}
