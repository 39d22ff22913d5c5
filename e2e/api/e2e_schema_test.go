//go:build unix

package api

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 52's structured output through `spoolgate run` on the API lane:
// task files with a schema written inline in YAML, as a colleague writes
// one. The stand-in model answers as a model does: a first answer that
// does not match (a tag that is a number), then, told the mismatch, the
// JSON in a fenced block with prose around it. The result is the JSON
// alone (resultFormat json) after one refused attempt whose error the
// second request's prompt carried; a model that never matches fails as
// errorClass schema naming the first mismatch after its retries; any
// JSON object (schema: object) refuses prose; a schema that does not
// compile, or refers outside itself, is refused at intake, and so is a
// task's own sampling for a model whose config does not allow it.
func TestE2E_Schema(t *testing.T) {
	t.Parallel()
	const good = `{"title": "Spools", "tags": ["thread", "craft"], "category": "howto"}`
	var mu sync.Mutex
	seen := map[string]int{}
	api := rig.APIStand(t, apistand.Options{Answer: func(user string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		seen[user]++
		switch {
		case strings.Contains(user, "corrects itself"):
			if seen[user] == 1 {
				return `{"title": "Spools", "tags": ["thread", 7], "category": "howto"}`, true
			}
			return "Here is the JSON:\n\n```json\n" + good + "\n```\n\nHope it helps.", true
		case strings.Contains(user, "never matches"):
			return `{"title": 42, "tags": [], "category": "news"}`, true
		case strings.Contains(user, "any object"):
			return "Sure! " + good, true
		}
		return "", false
	}})
	r := rig.New(t, rig.Opts{Tail: rig.APIModels(api.URL())}, "E2E_API_KEY=k")
	schema := `schema:
  type: object
  required: [title, tags, category]
  properties:
    title: {type: string}
    tags: {type: array, items: {type: string}}
    category: {enum: [news, howto, review]}
`
	drops := map[string]string{
		"corrects":  "taskId: corrects\nmodel: api-plain\nprompt: Tag this article.\ncontent: corrects itself\n" + schema,
		"never":     "taskId: never\nmodel: api-plain\ncontent: never matches\n" + schema,
		"object":    "taskId: object\nmodel: api-plain\ncontent: any object\nschema: object\n",
		"badschema": "taskId: badschema\nmodel: api-plain\ncontent: x\nschema:\n  type: 12\n",
		"fileref":   "taskId: fileref\nmodel: api-plain\ncontent: x\nschema:\n  $ref: file:///etc/passwd\n",
		"sampled":   "taskId: sampled\nmodel: api-plain\ncontent: x\nsampling: {temperature: 0.1}\n",
	}
	dir := filepath.Join(r.Dir, "drops")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for id, body := range drops {
		if err := os.WriteFile(filepath.Join(dir, id+".yaml"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// submit checks every file as intake will: the two bad schemas, and
	// sampling the model does not allow, are refused there, by name, and
	// nothing is dropped.
	for id, want := range map[string]string{"badschema": "schema: ", "fileref": "schema: ",
		"sampled": "sampling.temperature: model api-plain does not take a per-task temperature (its requestFields: none)"} {
		code, _, errOut := r.Run("submit", filepath.Join(dir, id+".yaml"))
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("%s: submit exited %d, stderr %q; want a refusal with %q", id, code, errOut, want)
		}
	}
	d := r.Start()
	r.CLI("submit", filepath.Join(dir, "corrects.yaml"), filepath.Join(dir, "never.yaml"), filepath.Join(dir, "object.yaml"))

	got := r.Final(taskfile.KindAPI, "corrects", time.Minute)
	var v map[string]any
	if got.State != taskfile.StateSuccess || got.ResultFormat != taskfile.FormatJSON || got.Attempt != 2 || json.Unmarshal([]byte(got.Result), &v) != nil || got.Result != good {
		t.Errorf("corrects: state %s, attempt %d, format %q, result %q, error %q", got.State, got.Attempt, got.ResultFormat, got.Result, got.Error)
	}
	if got.Usage.PromptTokens == 0 || got.Usage.CompletionTokens != len(strings.Fields("Here is the JSON:\n\n```json\n"+good+"\n```\n\nHope it helps.")) {
		t.Errorf("corrects: usage %+v; want the API's count of the answer that was kept", got.Usage)
	}
	var second *apistand.Request
	for _, q := range api.Requests() {
		if q.User == "corrects itself" && strings.Contains(q.System, "Your previous answer was refused") {
			second = &q
		}
	}
	if second == nil || !strings.HasPrefix(second.System, "Tag this article.\n\nAnswer with JSON only") ||
		!strings.Contains(second.System, `"category":{"enum":["news","howto","review"]}`) ||
		!strings.Contains(second.System, "at /tags/1: got number, want string") {
		t.Errorf("the retry's prompt does not carry the schema and the mismatch: %+v", second)
	}

	got = r.Final(taskfile.KindAPI, "never", time.Minute)
	if got.State != taskfile.StateFailed || got.ErrorClass != taskfile.ClassSchema || got.Attempt != 3 || !strings.Contains(got.Error, "at /title: got number, want string") {
		t.Errorf("never: state %s, class %s, attempt %d, error %q", got.State, got.ErrorClass, got.Attempt, got.Error)
	}
	got = r.Final(taskfile.KindAPI, "object", time.Minute)
	if got.State != taskfile.StateFailed || got.ErrorClass != taskfile.ClassSchema || !strings.Contains(got.Error, "holds no JSON") {
		t.Errorf("object: state %s, class %s, error %q", got.State, got.ErrorClass, got.Error)
	}
	d.Stop()
	if n := seen["never matches"]; n != 3 {
		t.Errorf("the never-matching task was asked %d times, want 3 (two retries)", n)
	}
}
