package console

import (
	"testing"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The batch's tokens: successes only, reported apart from estimated, per
// model and per door token (only when a task came through the door), the
// cost of priced models only.
func TestBatchUsage_Of(t *testing.T) {
	cfg := &config.Config{Models: []config.ModelConfig{{Name: "priced", Price: &config.Price{Input: 1, Output: 2}}, {Name: "free"}, {Name: "web"}}}
	ok := taskfile.StateSuccess
	ts := []status.BatchTask{
		{State: ok, Model: "priced", DoorToken: "alice", Usage: taskfile.Usage{PromptTokens: 100, CompletionTokens: 50, ReasoningTokens: 20, CachedTokens: 60}},
		{State: ok, Model: "priced", Usage: taskfile.Usage{PromptTokens: 10, CompletionTokens: 5}},
		{State: ok, Model: "free", DoorToken: "alice", Usage: taskfile.Usage{PromptTokens: 1, CompletionTokens: 1}},
		{State: ok, Model: "web", DoorToken: "alice", Usage: taskfile.Usage{PromptTokens: 7, CompletionTokens: 9, Estimated: true}},
		{State: taskfile.StateFailed, Model: "priced", Usage: taskfile.Usage{PromptTokens: 1000}},
		{State: ok, Model: "priced"},
	}
	got := batchUsageOf(ts, cfg, "zh-CN")
	want := []usageRow{
		{Of: "batch", Answers: 3, Prompt: 111, Completion: 56, Reasoning: 20, Cached: 60, Cost: "0.0002"},
		{Of: "batch", Estimated: true, Answers: 1, Prompt: 7, Completion: 9},
		{Of: "model", Name: "free", Answers: 1, Prompt: 1, Completion: 1},
		{Of: "model", Name: "priced", Answers: 2, Prompt: 110, Completion: 55, Reasoning: 20, Cached: 60, Cost: "0.0002"},
		{Of: "model", Name: "web", Estimated: true, Answers: 1, Prompt: 7, Completion: 9},
		{Of: "token", Name: "", Answers: 1, Prompt: 10, Completion: 5, Cost: "0.0000"},
		{Of: "token", Name: "alice", Answers: 2, Prompt: 101, Completion: 51, Reasoning: 20, Cached: 60, Cost: "0.0002"},
		{Of: "token", Name: "alice", Estimated: true, Answers: 1, Prompt: 7, Completion: 9},
	}
	if len(got.Rows) != len(want) {
		t.Fatalf("%d rows %+v; want %d", len(got.Rows), got.Rows, len(want))
	}
	for i, w := range want {
		g := got.Rows[i]
		g.cost = 0
		if g != w {
			t.Errorf("row %d: %+v; want %+v", i, g, w)
		}
	}
	if got.W.Tokens != "令牌用量" {
		t.Errorf("words %q: want the page's language", got.W.Tokens)
	}
	if u := batchUsageOf(ts[1:2], cfg, "en"); len(u.Rows) != 2 {
		t.Errorf("no door task: %+v; want the batch's and the model's lines only", u.Rows)
	}
}
