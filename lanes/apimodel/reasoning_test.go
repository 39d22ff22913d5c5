package apimodel

import (
	"fmt"
	"testing"

	"github.com/spoolgate/spoolgate/spool/config"
)

// thinkEvent is a stream chunk of a reasoning model's thinking.
func thinkEvent(field, text string) string {
	return fmt.Sprintf(`data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":null,%q:%q},"finish_reason":null}]}`+"\n\n", field, text)
}

// A reasoning model's thinking is kept apart from its answer in every
// form a vendor sends it: reasoning_content (DeepSeek, Qwen, Kimi) or
// reasoning (OpenRouter, vLLM) beside the content, streamed or whole, or
// inline as <think>…</think>; an answer without thinking keeps none.
func TestExecutor_Reasoning(t *testing.T) {
	whole := `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"# Title\n\nBody.","reasoning_content":"The user wants a title."},"finish_reason":"stop"}]}`
	answers := map[string]cannedAnswer{
		"stream reasoning_content": {200, sse, nil, thinkEvent("reasoning_content", "The user ") + thinkEvent("reasoning_content", "wants a title.") +
			chunkEvent("# Title", "") + chunkEvent("\n\nBody.", "stop") + "data: [DONE]\n\n"},
		"stream reasoning": {200, sse, nil, thinkEvent("reasoning", "The user wants a title.") + chunkEvent("# Title\n\nBody.", "stop") + "data: [DONE]\n\n"},
		"json":             {200, "application/json", nil, whole},
		"inline think": {200, sse, nil, chunkEvent("<think>\nThe user ", "") + chunkEvent("wants a title.\n</think>\n\n# Title", "") +
			chunkEvent("\n\nBody.", "stop") + "data: [DONE]\n\n"},
		"no thinking":   {200, sse, nil, chunkEvent("# Title\n\nBody.", "stop") + "data: [DONE]\n\n"},
		"only thinking": {200, sse, nil, thinkEvent("reasoning_content", "Hmm.") + chunkEvent("", "length") + "data: [DONE]\n\n"},
	}
	url := cannedServer(t, answers)
	c := testConfig(t, url, config.ModelConfig{Name: "m"})
	e := executor(t, c)
	for _, tt := range []struct{ content, text, thinking, err string }{
		{"stream reasoning_content", "# Title\n\nBody.", "The user wants a title.", ""},
		{"stream reasoning", "# Title\n\nBody.", "The user wants a title.", ""},
		{"json", "# Title\n\nBody.", "The user wants a title.", ""},
		{"inline think", "# Title\n\nBody.", "The user wants a title.", ""},
		{"no thinking", "# Title\n\nBody.", "", ""},
		{"only thinking", "", "", "m: empty answer from model m (finish_reason length)"},
	} {
		t.Run(tt.content, func(t *testing.T) {
			res, te, _ := run(t, e, c, "m", tt.content)
			if tt.err != "" {
				if te == nil || te.Error() != tt.err {
					t.Fatalf("error %v, want %q", te, tt.err)
				}
				return
			}
			if te != nil {
				t.Fatal(te)
			}
			if res.Text != tt.text || res.Reasoning != tt.thinking {
				t.Fatalf("text %q, reasoning %q; want %q, %q", res.Text, res.Reasoning, tt.text, tt.thinking)
			}
		})
	}
}
