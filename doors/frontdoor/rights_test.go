package frontdoor

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// rightsDoor is a door with token cms (the test door's) and these others,
// each with models [writer] and the keys given; it returns their tokens
// by name.
func rightsDoor(t *testing.T, cms string, others map[string]string) (*Door, map[string]string) {
	t.Helper()
	toks := map[string]string{}
	extra := ""
	for name, keys := range others {
		tok, hash := NewToken()
		toks[name] = tok
		extra += fmt.Sprintf("  %s: {hash: %q, models: [writer]%s}\n", name, hash, keys)
	}
	d, tok := newTestDoorWith(t, cms, extra, "")
	if err := d.st.Layout.Create(); err != nil {
		t.Fatal(err)
	}
	toks["cms"] = tok
	return d, toks
}

func decode(t *testing.T, w interface{ Bytes() []byte }) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(w.Bytes(), &m); err != nil {
		t.Fatalf("not JSON: %s", w.Bytes())
	}
	return m
}

// firstID is the taskId of a submit's first task.
func firstID(t *testing.T, m map[string]any) string {
	t.Helper()
	ts, _ := m["tasks"].([]any)
	if len(ts) == 0 {
		t.Fatalf("no tasks in %v", m)
	}
	return ts[0].(map[string]any)["taskId"].(string)
}

// Another token's task answers exactly as a task that does not exist:
// for read, wait, cancel and retry the same status and body, its id
// aside; a submit with its taskId or its Idempotency-Key makes a new task
// of the token's own, as an unknown id would. read: all reads it; act:
// all also cancels it; read: all alone may not (403).
func TestDoor_TokenOwnsItsTasks(t *testing.T) {
	d, toks := rightsDoor(t, "", map[string]string{"low": "", "reader": ", read: all", "boss": ", act: all"})
	body := `{"model":"writer","content":"cms's secret"}`
	w := serve(d, http.MethodPost, "/api/v1/tasks", toks["cms"], body, "Idempotency-Key", "k1")
	if w.Code != http.StatusCreated {
		t.Fatalf("cms submit: %d %s", w.Code, w.Body)
	}
	id := firstID(t, decode(t, w.Body))
	const unknown = "door-cms-000000000000000000000000"
	routes := []struct{ method, suffix string }{
		{http.MethodGet, ""}, {http.MethodGet, "/wait?timeout=1ms"}, {http.MethodPost, "/cancel"}, {http.MethodPost, "/retry"},
	}
	for _, rt := range routes {
		theirs := serve(d, rt.method, "/api/v1/tasks/api/"+id+rt.suffix, toks["low"], "")
		none := serve(d, rt.method, "/api/v1/tasks/api/"+unknown+rt.suffix, toks["low"], "")
		if theirs.Code != http.StatusNotFound || theirs.Code != none.Code ||
			strings.ReplaceAll(theirs.Body.String(), id, "ID") != strings.ReplaceAll(none.Body.String(), unknown, "ID") {
			t.Errorf("low %s %s: %d %s; an unknown task: %d %s", rt.method, rt.suffix, theirs.Code, theirs.Body, none.Code, none.Body)
		}
	}
	// Submits: cms's taskId, cms's key, against an unknown taskId.
	taken := serve(d, http.MethodPost, "/api/v1/tasks", toks["low"], `{"taskId":"`+id+`","model":"writer","content":"guess"}`)
	fresh := serve(d, http.MethodPost, "/api/v1/tasks", toks["low"], `{"taskId":"`+unknown+`","model":"writer","content":"guess"}`)
	if taken.Code != http.StatusCreated || fresh.Code != http.StatusCreated || strings.Contains(taken.Body.String(), "secret") {
		t.Errorf("low submits cms's taskId: %d %s; an unknown one: %d %s", taken.Code, taken.Body, fresh.Code, fresh.Body)
	}
	if got := firstID(t, decode(t, taken.Body)); got != "door-low-"+id {
		t.Errorf("low's task for cms's id is %q, want its own door-low-%s", got, id)
	}
	if w := serve(d, http.MethodPost, "/api/v1/tasks", toks["low"], `{"model":"writer","content":"another"}`, "Idempotency-Key", "k1"); w.Code != http.StatusCreated || firstID(t, decode(t, w.Body)) == id {
		t.Errorf("low with cms's key: %d %s", w.Code, w.Body)
	}
	// The owner and read: all read it; read: all may not cancel it, act: all may.
	for _, c := range []struct {
		tok, method, suffix string
		want                int
	}{
		{"cms", http.MethodGet, "", http.StatusOK},
		{"reader", http.MethodGet, "", http.StatusOK},
		{"reader", http.MethodPost, "/cancel", http.StatusForbidden},
		{"boss", http.MethodGet, "", http.StatusOK},
		{"boss", http.MethodPost, "/cancel", http.StatusAccepted},
	} {
		if w := serve(d, c.method, "/api/v1/tasks/api/"+id+c.suffix, toks[c.tok], ""); w.Code != c.want {
			t.Errorf("%s %s %s: %d %s, want %d", c.tok, c.method, c.suffix, w.Code, w.Body, c.want)
		}
	}
}

// A file a colleague drops on the share under a token's id, saying it is
// the token's, is no token's: only the door's sealed drop is.
func TestDoor_ForgedOwnerRefused(t *testing.T) {
	d, toks := rightsDoor(t, "", map[string]string{"low": ""})
	id := "door-low-planted"
	data := "taskId: " + id + "\nmodel: writer\ncontent: planted\ndoorToken: low\n"
	if err := os.WriteFile(d.st.Layout.TaskPath(taskfile.KindAPI, taskfile.DirIncoming, id), []byte(data), 0o640); err != nil {
		t.Fatal(err)
	}
	if w := serve(d, http.MethodGet, "/api/v1/tasks/api/"+id, toks["low"], ""); w.Code != http.StatusNotFound {
		t.Errorf("a planted drop naming low: %d %s", w.Code, w.Body)
	}
	// The door's own drop is the token's.
	w := serve(d, http.MethodPost, "/api/v1/tasks", toks["low"], `{"taskId":"mine","model":"writer","content":"x"}`)
	if w.Code != http.StatusCreated {
		t.Fatalf("submit: %d %s", w.Code, w.Body)
	}
	if w := serve(d, http.MethodGet, "/api/v1/tasks/api/door-low-mine", toks["low"], ""); w.Code != http.StatusOK {
		t.Errorf("low's own drop: %d %s", w.Code, w.Body)
	}
}

// rate counts tasks: a 5/m token's 60-task request is refused whole
// (429, naming the rate, nothing dropped); 5 pass, the 6th does not.
func TestDoor_RateCountsTasks(t *testing.T) {
	d, toks := rightsDoor(t, "", map[string]string{"five": `, rate: "5/m"`})
	list := func(n int, tag string) string {
		var ts []string
		for i := range n {
			ts = append(ts, fmt.Sprintf(`{"model":"writer","content":"%s %d"}`, tag, i))
		}
		return `{"tasks":[` + strings.Join(ts, ",") + `]}`
	}
	incoming := func() int {
		ents, _ := os.ReadDir(d.st.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming))
		return len(ents)
	}
	w := serve(d, http.MethodPost, "/api/v1/tasks", toks["five"], list(60, "bulk"))
	if w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), "5/m") || incoming() != 0 {
		t.Fatalf("60 tasks at 5/m: %d %s; %d dropped", w.Code, w.Body, incoming())
	}
	if w := serve(d, http.MethodPost, "/api/v1/tasks", toks["five"], list(5, "five")); w.Code != http.StatusCreated || incoming() != 5 {
		t.Fatalf("5 tasks: %d %s; %d dropped", w.Code, w.Body, incoming())
	}
	w = serve(d, http.MethodPost, "/api/v1/tasks", toks["five"], list(1, "sixth"))
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || incoming() != 5 {
		t.Errorf("the 6th task: %d %s Retry-After %q; %d dropped", w.Code, w.Body, w.Header().Get("Retry-After"), incoming())
	}
}

// priority (above normal), output and attachments are refused with 403
// naming the field unless the token's allow: grants it.
func TestDoor_FieldGrants(t *testing.T) {
	tests := []struct {
		field, task, param string
	}{
		{"priority", `"priority":"high"`, "tasks[0].priority"},
		{"output", `"output":"r/x.md"`, "tasks[0].output"},
		{"attachments", `"attachments":["a.txt"]`, "tasks[0].attachments"},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			d, toks := rightsDoor(t, "", map[string]string{"granted": ", allow: [" + tt.field + "]"})
			files := filepath.Join(d.st.Layout.Root, "files")
			if err := os.MkdirAll(files, 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(files, "a.txt"), []byte("notes"), 0o640); err != nil {
				t.Fatal(err)
			}
			body := `{"model":"writer","content":"x",` + tt.task + `}`
			w := serve(d, http.MethodPost, "/api/v1/tasks", toks["cms"], body)
			var e map[string]map[string]any
			_ = json.Unmarshal(w.Body.Bytes(), &e)
			if w.Code != http.StatusForbidden || e["error"]["param"] != tt.param || e["error"]["code"] != "field_not_allowed" ||
				!strings.Contains(e["error"]["message"].(string), "may not set "+tt.field) {
				t.Errorf("without the grant: %d %s", w.Code, w.Body)
			}
			if w := serve(d, http.MethodPost, "/api/v1/tasks", toks["granted"], body); w.Code != http.StatusCreated {
				t.Errorf("with the grant: %d %s", w.Code, w.Body)
			}
		})
	}
	// The default priority needs no grant.
	d, toks := rightsDoor(t, "", nil)
	if w := serve(d, http.MethodPost, "/api/v1/tasks", toks["cms"], `{"model":"writer","content":"x","priority":"normal"}`); w.Code != http.StatusCreated {
		t.Errorf("priority normal: %d %s", w.Code, w.Body)
	}
}

// A new task whose output: is a file already there is refused with 409
// naming it, nothing dropped; the same request again joins its task.
func TestDoor_OutputTaken(t *testing.T) {
	d, toks := rightsDoor(t, ", allow: [output]", nil)
	out := filepath.Join(d.st.Layout.Output(), "r")
	if err := os.MkdirAll(out, 0o750); err != nil {
		t.Fatal(err)
	}
	body := `{"model":"writer","content":"x","output":"r/new.md"}`
	if w := serve(d, http.MethodPost, "/api/v1/tasks", toks["cms"], body, "Idempotency-Key", "o1"); w.Code != http.StatusCreated {
		t.Fatalf("a free output: %d %s", w.Code, w.Body)
	}
	if err := os.WriteFile(filepath.Join(out, "new.md"), []byte("written since"), 0o640); err != nil {
		t.Fatal(err)
	}
	if w := serve(d, http.MethodPost, "/api/v1/tasks", toks["cms"], body, "Idempotency-Key", "o1"); w.Code != http.StatusOK {
		t.Errorf("the same request again: %d %s, want 200 (joined)", w.Code, w.Body)
	}
	w := serve(d, http.MethodPost, "/api/v1/tasks", toks["cms"], body, "Idempotency-Key", "o2")
	if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), `r/new.md`) || !strings.Contains(w.Body.String(), "tasks[0].output") {
		t.Errorf("a taken output: %d %s", w.Code, w.Body)
	}
	if ents, _ := os.ReadDir(d.st.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)); len(ents) != 1 {
		t.Errorf("incoming holds %d files, want 1", len(ents))
	}
}

// A drop of the door's that intake refuses (its output taken meanwhile)
// is still its token's: the owner reads the refusal, another token
// nothing.
func TestDoor_RejectedDropOwned(t *testing.T) {
	d, toks := rightsDoor(t, ", allow: [output]", map[string]string{"low": ""})
	w := serve(d, http.MethodPost, "/api/v1/tasks", toks["cms"], `{"taskId":"r1","model":"writer","content":"x","output":"r1.md"}`)
	if w.Code != http.StatusCreated {
		t.Fatalf("submit: %d %s", w.Code, w.Body)
	}
	if err := os.WriteFile(filepath.Join(d.st.Layout.Output(), "r1.md"), []byte("a colleague's"), 0o640); err != nil {
		t.Fatal(err)
	}
	in := d.st.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	if res, err := d.st.Intake(in, "door-cms-r1.yaml", taskfile.KindAPI); err != nil || res.Reason == "" {
		t.Fatalf("intake: %+v %v", res, err)
	}
	w = serve(d, http.MethodGet, "/api/v1/tasks/api/door-cms-r1", toks["cms"], "")
	if m := decode(t, w.Body); w.Code != http.StatusOK || m["state"] != "failed" || !strings.Contains(m["error"].(string), `"r1.md" already exists`) {
		t.Errorf("the owner reads its refused drop: %d %s", w.Code, w.Body)
	}
	if w := serve(d, http.MethodGet, "/api/v1/tasks/api/door-cms-r1", toks["low"], ""); w.Code != http.StatusNotFound {
		t.Errorf("another token reads it: %d %s", w.Code, w.Body)
	}
}
