package apimodel

import (
	"testing"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The vendor's usage is kept with its details, from a stream's last
// chunk or a whole completion: reasoning tokens (completion_tokens_details)
// and cached ones (prompt_tokens_details) as parts of the totals.
func TestExecutor_Usage(t *testing.T) {
	details := `"usage":{"prompt_tokens":40,"completion_tokens":30,"total_tokens":70,"prompt_tokens_details":{"cached_tokens":32},"completion_tokens_details":{"reasoning_tokens":25}}`
	answers := map[string]cannedAnswer{
		"stream details": {200, sse, nil, chunkEvent("Hi.", "stop") + `data: {"id":"c","object":"chat.completion.chunk","choices":[],` + details + "}\n\ndata: [DONE]\n\n"},
		"json details":   {200, "application/json", nil, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}],` + details + `}`},
		"json plain": {200, "application/json", nil, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":4,"completion_tokens":3,"total_tokens":7}}`},
		"no usage": {200, sse, nil, chunkEvent("Hi.", "stop") + "data: [DONE]\n\n"},
	}
	url := cannedServer(t, answers)
	c := testConfig(t, url, config.ModelConfig{Name: "m"})
	e := executor(t, c)
	for _, tt := range []struct {
		content string
		want    taskfile.Usage
	}{
		{"stream details", taskfile.Usage{PromptTokens: 40, CompletionTokens: 30, ReasoningTokens: 25, CachedTokens: 32}},
		{"json details", taskfile.Usage{PromptTokens: 40, CompletionTokens: 30, ReasoningTokens: 25, CachedTokens: 32}},
		{"json plain", taskfile.Usage{PromptTokens: 4, CompletionTokens: 3}},
		{"no usage", taskfile.Usage{}},
	} {
		t.Run(tt.content, func(t *testing.T) {
			res, te, _ := run(t, e, c, "m", tt.content)
			if te != nil {
				t.Fatal(te)
			}
			if res.Usage != tt.want {
				t.Errorf("usage %+v; want %+v", res.Usage, tt.want)
			}
		})
	}
}
