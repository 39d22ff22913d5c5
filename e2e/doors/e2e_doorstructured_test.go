//go:build unix

package doors

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/examples/chatstand"
)

// TestE2E_Door_StructuredJS is issue 52's acceptance with the clients the
// JavaScript world uses, written by others: the official openai npm SDK's
// chat.completions.parse() with a zod schema (the twin of the Python
// SDK's parse() with a pydantic model, which PyPI's absence here keeps
// out) and LangChain.js's withStructuredOutput(), through the door, on
// an API model (its answer's JSON in a fence) and on a web model (the
// chat stand-in's page answers broken JSON, then, told why, the JSON):
// each returns the parsed object. A web model that never answers valid
// JSON fails with the validation error after its retries.
func TestE2E_Door_StructuredJS(t *testing.T) {
	t.Parallel()
	r := newDoorRig(t, 0.01, "")
	d := r.startDoor("door")
	defer d.Stop()
	type call struct {
		Via     string `json:"via"`
		Model   string `json:"model"`
		Content string `json:"content"`
	}
	type result struct {
		Parsed *struct {
			Title string   `json:"title"`
			Tags  []string `json:"tags"`
		} `json:"parsed"`
		Error *struct {
			Status  json.RawMessage `json:"status"`
			Code    string          `json:"code"`
			Message string          `json:"message"`
		} `json:"error"`
	}
	calls := []call{
		{"sdk", "api-door", "[[duration=30s]] as json please, from the npm sdk"},
		{"langchain", "api-door", "[[duration=30s]] as json please, from langchain"},
		{"sdk", "web-door", "[[json]] an article as json, from the npm sdk"},
		{"langchain", "web-door", "[[json]] an article as json, from langchain"},
		{"sdk", "web-door", "[[json=never]] never valid json, from the npm sdk"},
	}
	var res []result
	r.runNodeScript("structured.mjs", doorToken, calls, &res)
	if len(res) != len(calls) {
		t.Fatalf("%d results for %d calls", len(res), len(calls))
	}
	var valid struct {
		Title string   `json:"title"`
		Tags  []string `json:"tags"`
	}
	if err := json.Unmarshal([]byte(chatstand.JSONValid), &valid); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"api-door": {"Spools", "thread"}, "web-door": append([]string{valid.Title}, valid.Tags...)}
	for i, c := range calls[:4] {
		got := res[i]
		if got.Parsed == nil {
			t.Errorf("%s on %s: no parsed object: %+v", c.Via, c.Model, got.Error)
			continue
		}
		if w := want[c.Model]; got.Parsed.Title != w[0] || strings.Join(got.Parsed.Tags, ",") != strings.Join(w[1:], ",") {
			t.Errorf("%s on %s: parsed %+v, want title %q tags %q", c.Via, c.Model, *got.Parsed, w[0], w[1:])
		}
	}
	if e := res[4].Error; res[4].Parsed != nil || e == nil || string(e.Status) != "422" || e.Code != "task_schema" || !strings.Contains(e.Message, "does not match the schema") {
		t.Errorf("never-valid JSON: %+v; want a 422 task_schema naming the mismatch", res[4])
	}
}
