package console

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoolgate/spoolgate/spool/status"
)

// Tokens on /metrics (issue 52): gauges read from the spool at each scrape
// like the task counts (done/ is the truth, and the archive takes files
// out of it, so they are not counters). Labels are bounded: lane, a model
// the config names (any other is status.OtherModel), the kind of count,
// and whether the APIs reported it or spoolgate estimated it (web).
var (
	descTokens = prometheus.NewDesc("spoolgate_tokens",
		"Tokens of successful answers in done/, by lane, model, kind (prompt, completion, reasoning, cached; reasoning and cached are parts of completion and prompt) and source (reported by the API, estimated by spoolgate's tokenizer for web answers).",
		[]string{"lane", "model", "kind", "source"}, nil)
	descTokenCost = prometheus.NewDesc("spoolgate_token_cost",
		"What the reported tokens of successful answers in done/ cost at the model's price (per million tokens, in the config's currency); only for models with a price.",
		[]string{"lane", "model"}, nil)
)

// collectTokens gives ln's tokens per model as metrics.
func collectTokens(g func(d *prometheus.Desc, v float64, labels ...string), ln status.Lane) {
	models := make([]string, 0, len(ln.ModelTokens))
	for m := range ln.ModelTokens {
		models = append(models, m)
	}
	slices.Sort(models)
	for _, m := range models {
		t := ln.ModelTokens[m]
		if t.Prompt+t.Completion > 0 {
			g(descTokens, float64(t.Prompt), ln.Lane, m, "prompt", "reported")
			g(descTokens, float64(t.Completion), ln.Lane, m, "completion", "reported")
			g(descTokens, float64(t.Reasoning), ln.Lane, m, "reasoning", "reported")
			g(descTokens, float64(t.Cached), ln.Lane, m, "cached", "reported")
		}
		if e := t.Estimated; e != nil {
			g(descTokens, float64(e.Prompt), ln.Lane, m, "prompt", "estimated")
			g(descTokens, float64(e.Completion), ln.Lane, m, "completion", "estimated")
			g(descTokens, float64(e.Reasoning), ln.Lane, m, "reasoning", "estimated")
		}
		if t.Cost != nil {
			g(descTokenCost, *t.Cost, ln.Lane, m)
		}
	}
}
