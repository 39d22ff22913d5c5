//go:build linux

package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 52's structured output on a web model, through `spoolgate run`
// with a real Chromium on the chat stand-in: the page first answers JSON
// that does not parse, then, told why in the next message, valid JSON:
// the task is done with the JSON alone (resultFormat json) at its second
// attempt, each attempt's tokens estimated by the tokenizer. A page that
// never answers matching JSON fails as errorClass schema naming the first
// mismatch after its retries. The model (needEmptyPrompt: its prompt is
// never sent) gets the schema after the content.
func TestE2E_Web_Schema(t *testing.T) {
	t.Parallel()
	w := e2eNewWeb(t, rig.Opts{}, 0.01, "")
	schema := "schema:\n  type: object\n  required: [title, tags]\n  properties:\n    title: {type: string}\n    tags: {type: array, items: {type: string}}\n"
	drops := map[string]string{
		"corrects": "taskId: corrects\nmodel: chat-web\nprompt: Tag this article.\ncontent: '[[json]] [[duration=20s]] an article about spools'\n" + schema,
		"never":    "taskId: never\nmodel: chat-web\ncontent: '[[json=never]] [[duration=20s]] an article about thread'\n" + schema,
	}
	args := []string{"submit"}
	for id, body := range drops {
		p := filepath.Join(w.Dir, id+".yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	d := w.Start()
	w.CLI(args...)

	got := w.Final(taskfile.KindWeb, "corrects", 2*time.Minute)
	if got.State != taskfile.StateSuccess || got.Attempt != 2 || got.ResultFormat != taskfile.FormatJSON || got.Result != chatstand.JSONValid {
		t.Errorf("corrects: state %s, attempt %d, format %q, result %q, error %q; want the valid JSON alone at attempt 2", got.State, got.Attempt, got.ResultFormat, got.Result, got.Error)
	}
	if u := got.Usage; !u.Estimated || u.PromptTokens == 0 || u.CompletionTokens == 0 {
		t.Errorf("corrects: usage %+v; want an estimate", u)
	}
	if len(got.Attempts) != 2 || !got.Attempts[0].Usage.Estimated || got.Attempts[0].Usage.CompletionTokens == 0 || got.Attempts[1].Usage != got.Usage {
		t.Errorf("corrects: attempts %+v; want each attempt's estimate, the refused one's too", got.Attempts)
	}
	got = w.Final(taskfile.KindWeb, "never", 2*time.Minute)
	if got.State != taskfile.StateFailed || got.ErrorClass != taskfile.ClassSchema || got.Attempt != 3 || !strings.Contains(got.Error, "at /title: got number, want string") {
		t.Errorf("never: state %s, class %s, attempt %d, error %q; want schema naming /title after 3 attempts", got.State, got.ErrorClass, got.Attempt, got.Error)
	}
	d.Stop()
	var told, refused int
	for _, m := range w.stand.Received() {
		if strings.Contains(m.Content, "an article about spools") {
			if strings.Contains(m.Content, "matching this JSON Schema") {
				told++
			}
			if strings.Contains(m.Content, "Your previous answer was refused: the answer holds no JSON") {
				refused++
			}
		}
	}
	if told != 2 || refused != 1 {
		t.Errorf("the page's messages: %d told the schema, %d the refusal; want 2 and 1", told, refused)
	}
}
