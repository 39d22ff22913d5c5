//go:build unix

package doors

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/chatstand"
)

// articleFormat is a json_schema response_format of an article: a title
// and string tags.
func articleFormat(strict bool) *shared.ResponseFormatJSONSchemaParam {
	f := &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
		Name: "article", Schema: map[string]any{"type": "object", "required": []string{"title", "tags"}, "properties": map[string]any{
			"title": map[string]any{"type": "string"}, "tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}},
	}}
	if strict {
		f.JSONSchema.Strict = openai.Bool(true)
	}
	return f
}

// doorSchemaChecks is TestE2E_Door_SDKs' structured output and usage
// (issue 52), with the official Go SDK: response_format json_schema is
// the task's schema, the answer's JSON alone comes back, checked, on the
// API model and on the web model (whose page answers broken JSON, then,
// told why, the JSON); one that cannot hold is refused. usage is the
// API's own count, details included, or the web answer's estimate,
// marked so.
func doorSchemaChecks(ctx context.Context, t *testing.T, r *doorRig, c openai.Client) {
	t.Helper()
	p := doorParams("api-door", "", "[[duration=30s]] [[reasoning=5]] [[cached=3]] as json please")
	p.ResponseFormat.OfJSONSchema = articleFormat(true)
	jres, err := c.Chat.Completions.New(ctx, p)
	if err != nil || len(jres.Choices) != 1 || jres.Choices[0].Message.Content != `{"title": "Spools", "tags": ["thread"]}` {
		t.Fatalf("json_schema: %+v, %v; want the JSON alone", jres, err)
	}
	// The stand-in counts words, and the reasoning and cached tokens it
	// was asked for.
	var reported apistand.Usage
	for _, q := range r.api.Requests() {
		if strings.Contains(q.User, "as json please") && q.Status == http.StatusOK {
			reported = q.Usage
		}
	}
	if u := jres.Usage; u.PromptTokens == 0 || u.CompletionTokens != 6+5 || u.TotalTokens != u.PromptTokens+u.CompletionTokens ||
		u.CompletionTokensDetails.ReasoningTokens != 5 || u.PromptTokensDetails.CachedTokens != 3 ||
		int(u.PromptTokens) != reported.Prompt || int(u.CompletionTokens) != reported.Completion {
		t.Errorf("usage %+v; want the stand-in's count %+v (the answer's 6 words, 5 reasoning, 3 cached)", u, reported)
	}
	p = doorParams("web-door", "", "[[json]] go sdk web json")
	p.ResponseFormat.OfJSONSchema = articleFormat(false)
	wres, err := c.Chat.Completions.New(ctx, p)
	if err != nil || len(wres.Choices) != 1 || wres.Choices[0].Message.Content != chatstand.JSONValid {
		t.Fatalf("web json_schema: %+v, %v; want the JSON alone", wres, err)
	}
	if u := wres.Usage; u.PromptTokens == 0 || u.CompletionTokens == 0 || !strings.Contains(wres.RawJSON(), `"estimated":true`) {
		t.Errorf("web usage %+v; want an estimate, marked so", u)
	}
	p = doorParams("api-door", "", "[[duration=30s]] plain text for a json_object")
	p.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	var schemaErr *openai.Error
	if _, err := c.Chat.Completions.New(ctx, p); !errors.As(err, &schemaErr) || schemaErr.StatusCode != http.StatusUnprocessableEntity ||
		schemaErr.Code != "task_schema" || !strings.Contains(schemaErr.Message, "holds no JSON") {
		t.Errorf("json_object on a prose answer: %v; want a 422 task_schema naming the mismatch", err)
	}
}
