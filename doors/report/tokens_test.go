package report

import (
	"testing"

	"github.com/spoolgate/spoolgate/spool/status"
)

func TestTokensText(t *testing.T) {
	cost := 0.01234
	tests := []struct {
		name string
		in   status.Tokens
		want string
	}{
		{"reported", status.Tokens{Prompt: 1200, Completion: 3400}, "tokens 1200 in + 3400 out"},
		{"parts and cost", status.Tokens{Prompt: 1200, Completion: 3400, Cached: 300, Reasoning: 800, Cost: &cost, Unpriced: 2},
			"tokens 1200 in (300 cached) + 3400 out (800 reasoning), cost 0.0123 (+ 2 answers of models without a price)"},
		{"estimated only", status.Tokens{Estimated: &status.Estimated{Answers: 3, Prompt: 90, Completion: 400, Reasoning: 100}},
			"estimated (web) 90 in + 400 out (100 reasoning) of 3 answers"},
		{"both", status.Tokens{Prompt: 1, Completion: 2, Estimated: &status.Estimated{Answers: 1, Prompt: 3, Completion: 4}},
			"tokens 1 in + 2 out; estimated (web) 3 in + 4 out of 1 answer"},
	}
	for _, tt := range tests {
		if got := TokensText(tt.in); got != tt.want {
			t.Errorf("%s: %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
