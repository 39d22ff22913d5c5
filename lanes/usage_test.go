package lanes

import (
	"testing"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/lanes/tokens"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A web answer gets an estimate of what was typed and what came back (the
// thinking where it is kept); an API answer, and a usage an executor
// reported, are left as they are.
func TestEstimateUsage(t *testing.T) {
	const p, c, a, r = "Be brief.", "tiktoken is great!", "tiktoken is great!", "tiktoken is great!"
	n := func(s string) int {
		k, err := tokens.Count("", s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	no := false
	reported := taskfile.Usage{PromptTokens: 1, CompletionTokens: 2}
	tests := []struct {
		name string
		m    config.ModelConfig
		in   taskfile.Usage
		want taskfile.Usage
	}{
		{"web", config.ModelConfig{Kind: taskfile.KindWeb}, taskfile.Usage{},
			taskfile.Usage{PromptTokens: n(p) + n(c), CompletionTokens: n(a) + n(r), ReasoningTokens: n(r), Estimated: true}},
		{"web, prompt never sent", config.ModelConfig{Kind: taskfile.KindWeb, NeedEmptyPrompt: true}, taskfile.Usage{},
			taskfile.Usage{PromptTokens: n(c), CompletionTokens: n(a) + n(r), ReasoningTokens: n(r), Estimated: true}},
		{"web, thinking not kept", config.ModelConfig{Kind: taskfile.KindWeb, KeepReasoning: &no}, taskfile.Usage{},
			taskfile.Usage{PromptTokens: n(p) + n(c), CompletionTokens: n(a), Estimated: true}},
		{"web, reported", config.ModelConfig{Kind: taskfile.KindWeb}, reported, reported},
		{"api", config.ModelConfig{Kind: taskfile.KindAPI}, taskfile.Usage{}, taskfile.Usage{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := attempt.NewJob(&taskfile.Task{TaskID: "t", Prompt: p, Content: c}, &tt.m, nil)
			got := estimateUsage(job, attempt.Result{Text: a, Reasoning: r, Usage: tt.in}).Usage
			if got != tt.want {
				t.Errorf("usage %+v; want %+v", got, tt.want)
			}
		})
	}
}
