package status

import (
	"testing"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Reported answers are totalled with their reasoning and cached parts and
// priced (cached prompt tokens at the cached price where there is one);
// estimated web counts are kept apart, never priced.
func TestTokens_Add(t *testing.T) {
	cached := 0.5
	price := &config.Price{Input: 2, Output: 8, Cached: &cached}
	var tk Tokens
	tk.Add(taskfile.Usage{PromptTokens: 1000, CompletionTokens: 500, ReasoningTokens: 200, CachedTokens: 600}, price)
	tk.Add(taskfile.Usage{PromptTokens: 100, CompletionTokens: 50}, nil)
	tk.Add(taskfile.Usage{PromptTokens: 30, CompletionTokens: 70, ReasoningTokens: 20, Estimated: true}, price)
	tk.Add(taskfile.Usage{}, price)
	if tk.Prompt != 1100 || tk.Completion != 550 || tk.Reasoning != 200 || tk.Cached != 600 || tk.Unpriced != 1 {
		t.Errorf("reported %+v", tk)
	}
	// 400 at 2 + 600 at 0.5 + 500 at 8, per million.
	if want := (400*2.0 + 600*0.5 + 500*8.0) / 1e6; tk.Cost == nil || *tk.Cost != want {
		t.Errorf("cost %v; want %v", tk.Cost, want)
	}
	if e := tk.Estimated; e == nil || *e != (Estimated{Answers: 1, Prompt: 30, Completion: 70, Reasoning: 20}) {
		t.Errorf("estimated %+v", e)
	}
	var sum Tokens
	sum.Sum(tk)
	sum.Sum(tk)
	if sum.Prompt != 2200 || sum.Cached != 1200 || sum.Estimated == nil || sum.Estimated.Answers != 2 || *sum.Cost != 2**tk.Cost {
		t.Errorf("sum %+v", sum)
	}
	if (Tokens{}).IsZero() != true || (Tokens{Estimated: &Estimated{}}).IsZero() {
		t.Error("IsZero")
	}
}
