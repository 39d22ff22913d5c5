package browser

import (
	"fmt"
	"strings"
	"testing"
)

// sseOf is an OpenAI-shaped stream: each piece a delta of field.
func sseOf(pieces ...[2]string) string {
	var b strings.Builder
	for _, p := range pieces {
		fmt.Fprintf(&b, "data: {\"choices\":[{\"delta\":{%q:%q}}]}\n\n", p[0], p[1])
	}
	return b.String() + "data: [DONE]\n\n"
}

// The thinking apart from the answer in a response: at the reasoning
// path beside the answer's, and inline as a leading <think>…</think>.
func TestNetSpec_ExtractBoth(t *testing.T) {
	spec := NetSpec{URL: "/api", Format: NetSSE, Path: "choices.0.delta.content", Reasoning: "choices.0.delta.reasoning_content"}
	plain := NetSpec{URL: "/api", Format: NetSSE, Path: "choices.0.delta.content"}
	for _, c := range []struct {
		name          string
		spec          NetSpec
		body          string
		answer, think string
		err           bool
	}{
		{"reasoning path", spec, sseOf([2]string{"reasoning_content", "用户想要"}, [2]string{"reasoning_content", "一个标题。"}, [2]string{"content", "# 标题"}, [2]string{"content", "\n\n正文"}), "# 标题\n\n正文", "用户想要一个标题。", false},
		{"inline think", plain, sseOf([2]string{"content", "<think>\nplan"}, [2]string{"content", " it\n</think>\n\n# T"}), "# T", "plan it", false},
		{"both", spec, sseOf([2]string{"reasoning_content", "a"}, [2]string{"content", "<think>b</think>c"}), "c", "a\n\nb", false},
		{"no thinking", spec, sseOf([2]string{"content", "x"}), "x", "", false},
		{"thinking only", spec, sseOf([2]string{"reasoning_content", "hmm"}), "", "hmm", true},
		{"the answer path is not the thinking", NetSpec{URL: "/api", Format: NetSSE, Path: "choices.0.delta.reasoning_content"}, sseOf([2]string{"reasoning_content", "t"}, [2]string{"content", "a"}), "t", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, th, err := extractBoth(c.spec, []byte(c.body))
			if (err != nil) != c.err || a != c.answer || th != c.think {
				t.Fatalf("extractBoth = %q, %q, %v; want %q, %q, error %v", a, th, err, c.answer, c.think, c.err)
			}
		})
	}
}
