package console

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The task page shows a reasoning model's kept thinking collapsed under
// the result, rendered and as its source, never inside the result; a
// task without thinking shows no block.
func TestHTTPServer_TaskReasoning(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	done := spool.NewLayout(cfg.Spool).Lane(taskfile.KindWeb, taskfile.DirDone)
	for _, tk := range []taskfile.Task{
		{TaskID: "r1", ModelKind: taskfile.KindWeb, Model: "deep", Content: "x", State: taskfile.StateSuccess, Result: "# Answer", Reasoning: "The user wants **a title**.\n\n<script>x</script>"},
		{TaskID: "r2", ModelKind: taskfile.KindWeb, Model: "deep", Content: "x", State: taskfile.StateSuccess, Result: "# Plain"},
	} {
		data, err := tk.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(done, tk.TaskID+".yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := startTestHTTP(t, cfg, nil)
	defer h.Stop()
	_, body := get(t, h, "/task/web/r1")
	page := string(body)
	res, det := strings.Index(page, "<h1>Answer</h1>"), strings.Index(page, `<details class="reasoning"><summary>`)
	if res < 0 || det < res || !strings.Contains(page[det:], "<strong>a title</strong>") || !strings.Contains(page[det:], "The user wants **a title**.") {
		t.Fatalf("the thinking is not collapsed under the result:\n%s", page)
	}
	if strings.Contains(page, "<script>x</script>") {
		t.Fatalf("the thinking's HTML is not made safe:\n%s", page)
	}
	if _, body := get(t, h, "/task/web/r2"); strings.Contains(string(body), `class="reasoning"`) {
		t.Fatalf("a task without thinking shows a block:\n%s", body)
	}
}

func TestUsageText(t *testing.T) {
	tests := []struct {
		in   taskfile.Usage
		want string
	}{
		{taskfile.Usage{}, ""},
		{taskfile.Usage{PromptTokens: 12, CompletionTokens: 30}, "12 prompt + 30 completion"},
		{taskfile.Usage{PromptTokens: 120, CompletionTokens: 40, CachedTokens: 100, ReasoningTokens: 30}, "120 prompt (100 cached) + 40 completion (30 reasoning)"},
		{taskfile.Usage{PromptTokens: 7, CompletionTokens: 9, Estimated: true}, "7 prompt + 9 completion, estimated"},
	}
	for _, tt := range tests {
		if got := usageText(tt.in); got != tt.want {
			t.Errorf("usageText(%+v) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
