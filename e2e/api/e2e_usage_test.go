//go:build unix

package api

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 52's usage through `spoolgate run`: a 40-task batch on two API
// models, one with schemaMode: native and a price, the other in
// instruction mode without one. The stand-in reports reasoning and
// cached tokens as each task's directives ask; every task file keeps
// the stand-in's own count (in its attempt's record too), the native
// model's requests carried the schema as response_format and the other's
// none, and the batch page's token totals, per batch and per model, and
// /metrics, equal the sum of the batch's task files, with the cost at
// the model's price.
func TestE2E_Usage(t *testing.T) {
	t.Parallel()
	const answer = `{"title": "Spools", "tags": ["thread"]}`
	api := rig.APIStand(t, apistand.Options{Answer: func(user string) (string, bool) {
		if strings.Contains(user, "as json") {
			return answer, true
		}
		return "", false
	}})
	tail := rig.APIModels(api.URL()) + fmt.Sprintf(
		"  - {name: api-native, kind: api, baseURL: %q, model: stand-in, apiKeyEnv: E2E_API_KEY, timeout: 10s, schemaMode: native, price: {input: 2, output: 8, cached: 0.5}}\n", api.URL())
	r := rig.New(t, rig.Opts{Tail: tail, HTTP: "127.0.0.1:0"}, "E2E_API_KEY=k")
	dir := filepath.Join(r.Dir, "drops")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const schema = "schema:\n  type: object\n  required: [title, tags]\n  properties:\n    title: {type: string}\n    tags: {type: array, items: {type: string}}\n"
	args := []string{"submit"}
	model := map[string]string{}
	for i := range 40 {
		id := fmt.Sprintf("a%02d", i)
		body := fmt.Sprintf("taskId: %s\nbatch: articles\nprompt: Tag article %d.\n", id, i)
		if i%2 == 0 {
			model[id] = "api-native"
			body += fmt.Sprintf("model: api-native\ncontent: '[[reasoning=%d]] [[cached=%d]] article %d as json'\n%s", i+1, i%4, i, schema)
		} else {
			model[id] = "api-plain"
			body += fmt.Sprintf("model: api-plain\ncontent: '[[reasoning=%d]] article %d in prose'\n", i%3, i)
		}
		p := filepath.Join(dir, id+".yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	d := r.Start()
	base := rig.StatusURL(t, d)
	r.CLI(args...)

	// What the stand-in reported, by the request's user content.
	reported := map[string]apistand.Usage{}
	sum := map[string]taskfile.Usage{} // per model, from the task files
	for id, m := range model {
		got := r.Final(taskfile.KindAPI, id, time.Minute)
		if got.State != taskfile.StateSuccess {
			t.Fatalf("%s: %s %s", id, got.State, got.Error)
		}
		sum[m] = sum[m].Add(got.Usage)
		if n := len(got.Attempts); n == 0 || got.Attempts[n-1].Usage != got.Usage {
			t.Errorf("%s: the attempt's record keeps %+v; want the task's %+v", id, got.Attempts, got.Usage)
		}
		if m == "api-native" && (got.ResultFormat != taskfile.FormatJSON || got.Result != answer) {
			t.Errorf("%s: result %q (%s); want the checked JSON", id, got.Result, got.ResultFormat)
		}
	}
	for _, q := range api.Requests() {
		if q.Status == 200 {
			reported[q.User] = q.Usage
		}
		native := strings.Contains(q.User, "as json")
		if rf := string(q.ResponseFormat); native != strings.Contains(rf, `"type":"json_schema"`) || !native && rf != "" {
			t.Errorf("request %q: response_format %s; want json_schema for the native model only", q.User, rf)
		}
		if native && strings.Contains(q.System, "matching this JSON Schema") {
			t.Errorf("request %q: the native model was told the schema as an instruction too: %q", q.User, q.System)
		}
	}
	var total taskfile.Usage
	for id := range model {
		got := r.Read(taskfile.KindAPI, taskfile.DirDone, id)
		u := reported[got.Content]
		want := taskfile.Usage{PromptTokens: u.Prompt, CompletionTokens: u.Completion, ReasoningTokens: u.Reasoning, CachedTokens: u.Cached}
		if got.Usage != want || want.PromptTokens == 0 {
			t.Errorf("%s: usage %+v; the stand-in reported %+v", id, got.Usage, want)
		}
		total = total.Add(got.Usage)
	}
	if total.ReasoningTokens == 0 || total.CachedTokens == 0 {
		t.Fatalf("the batch's usage %+v has no reasoning or cached tokens: the test tests nothing", total)
	}
	n := sum["api-native"]
	cost := (float64(n.PromptTokens-n.CachedTokens)*2 + float64(n.CachedTokens)*0.5 + float64(n.CompletionTokens)*8) / 1e6

	// The batch page's lines, as their data- attributes say.
	page, _ := rig.Get(t, base+"/batch/articles")
	lines := map[string][]string{}
	re := regexp.MustCompile(`<tr class="usage" data-of="(\w+)" data-name="([^"]*)" data-estimated="(\w+)" data-answers="(\d+)" data-prompt="(\d+)" data-completion="(\d+)" data-reasoning="(\d+)" data-cached="(\d+)" data-cost="([^"]*)">`)
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		lines[m[1]+"/"+m[2]+"/"+m[3]] = m[4:]
	}
	line := func(u taskfile.Usage, answers int, cost string) []string {
		return []string{strconv.Itoa(answers), strconv.Itoa(u.PromptTokens), strconv.Itoa(u.CompletionTokens), strconv.Itoa(u.ReasoningTokens), strconv.Itoa(u.CachedTokens), cost}
	}
	want := map[string][]string{
		"batch//false":           line(total, 40, fmt.Sprintf("%.4f", cost)),
		"model/api-native/false": line(sum["api-native"], 20, fmt.Sprintf("%.4f", cost)),
		"model/api-plain/false":  line(sum["api-plain"], 20, ""),
	}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("the batch page's tokens:\n%v\nwant the sum of its task files:\n%v", lines, want)
	}

	// The status page: the lane's line, the same sums.
	status, _ := rig.Get(t, base+"/")
	if want := fmt.Sprintf(`class="meta lane-tokens" data-prompt="%d" data-completion="%d"`, total.PromptTokens, total.CompletionTokens); !strings.Contains(status, want) {
		t.Errorf("the status page has no tokens line %s", want)
	}

	// /metrics: the same sums, by lane and model.
	metrics, _ := rig.Get(t, base+"/metrics")
	for _, m := range []string{"api-native", "api-plain"} {
		u := sum[m]
		for kind, v := range map[string]int{"prompt": u.PromptTokens, "completion": u.CompletionTokens, "reasoning": u.ReasoningTokens, "cached": u.CachedTokens} {
			s := fmt.Sprintf(`spoolgate_tokens{kind=%q,lane="api",model=%q,source="reported"} %d`, kind, m, v)
			if !strings.Contains(metrics, s+"\n") {
				t.Errorf("/metrics has no %s", s)
			}
		}
	}
	if !strings.Contains(metrics, `spoolgate_token_cost{lane="api",model="api-native"}`) || strings.Contains(metrics, `spoolgate_token_cost{lane="api",model="api-plain"}`) {
		t.Errorf("/metrics: want a cost for the priced model only")
	}
	d.Stop()

	// results: the columns, and the jsonl's counts.
	csv := r.CLI("results", "--batch", "articles", "--format", "csv")
	if !strings.Contains(strings.SplitN(csv, "\n", 2)[0], "promptTokens,completionTokens,reasoningTokens,cachedTokens,tokensEstimated") {
		t.Errorf("results CSV header %q", strings.SplitN(csv, "\n", 2)[0])
	}
}
