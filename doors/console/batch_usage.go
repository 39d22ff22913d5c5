package console

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/status"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The batch page's tokens (issue 52): its successful answers' usage in
// total, per model and per front-door token, the counts the APIs reported
// (with their reasoning and cached parts, and the cost where the model has
// a price) apart from the web answers' estimates, which are never added to
// them nor priced. Read from the snapshot's rows of the batch (their task
// files' usage, as status reads it): no second pass over the spool.

// usageRow is one line of the tokens table.
type usageRow struct {
	Of         string // what the line totals: batch, model or token (the front door's)
	Name       string // the model's or token's name; "" for the batch, or for tasks no token submitted
	Estimated  bool   // a web answer's count by spoolgate's tokenizer
	Answers    int
	Prompt     int
	Completion int
	Reasoning  int
	Cached     int
	Cost       string // "" where no answer's model has a price
	cost       float64
}

func (u *usageRow) add(x taskfile.Usage, price *config.Price) {
	u.Answers++
	u.Prompt += x.PromptTokens
	u.Completion += x.CompletionTokens
	u.Reasoning += x.ReasoningTokens
	u.Cached += x.CachedTokens
	if price != nil && !x.Estimated {
		u.cost += price.Of(x)
		u.Cost = fmt.Sprintf("%.4f", u.cost)
	}
}

// batchUsage is the tokens section: the batch's totals (reported, then
// estimated), then per model, then per door token ("" for tasks not
// submitted through the door, shown as such).
type batchUsage struct {
	Rows []usageRow
	W    usageWords
}

type usageWords struct {
	Tokens, What, Answers, Prompt, Completion, Reasoning, Cached, Cost, Batch, Model, Token, NoToken, Estimated, Reported, Note string
}

var usageWordsBy = map[string]usageWords{
	"en": {Tokens: "Tokens", What: "Of", Answers: "Answers", Prompt: "Prompt", Completion: "Completion", Reasoning: "of which reasoning",
		Cached: "of which cached", Cost: "Cost", Batch: "the batch", Model: "model", Token: "token", NoToken: "(not through the door)",
		Estimated: "estimated", Reported: "reported",
		Note: "Successful answers. Reported: as the APIs counted them, priced by the models' price. Estimated: web answers, counted by spoolgate's tokenizer; never added to the reported counts nor priced."},
	"zh-CN": {Tokens: "令牌用量", What: "统计对象", Answers: "回答数", Prompt: "输入", Completion: "输出", Reasoning: "其中推理",
		Cached: "其中缓存", Cost: "费用", Batch: "整个批次", Model: "模型", Token: "令牌", NoToken: "（非前门提交）",
		Estimated: "估算", Reported: "接口上报",
		Note: "只计成功的回答。接口上报：按各接口报告的数字，按模型配置的价格计费。估算：网页回答由 spoolgate 的分词器计数，不与上报数相加，也不计费。"},
}

// usageWordsFor is the tokens' words for a page in lang.
func usageWordsFor(lang string) usageWords {
	if w, ok := usageWordsBy[lang]; ok {
		return w
	}
	return usageWordsBy["en"]
}

// batchUsageOf totals ts, the batch's tasks, with cfg's prices.
func batchUsageOf(ts []status.BatchTask, cfg *config.Config, lang string) batchUsage {
	total, est := usageRow{Of: "batch"}, usageRow{Of: "batch", Estimated: true}
	models, tokens := map[usageKey]*usageRow{}, map[usageKey]*usageRow{}
	door := false // a task came through the front door: the per-token lines say something
	for _, t := range ts {
		if t.State != taskfile.StateSuccess || t.Usage.IsZero() {
			continue
		}
		var price *config.Price
		if m, ok := cfg.Model(t.Model); ok {
			price = m.Price
		}
		if t.Usage.Estimated {
			est.add(t.Usage, price)
		} else {
			total.add(t.Usage, price)
		}
		rowFor(models, usageKey{"model", t.Model, t.Usage.Estimated}).add(t.Usage, price)
		rowFor(tokens, usageKey{"token", t.DoorToken, t.Usage.Estimated}).add(t.Usage, price)
		door = door || t.DoorToken != ""
	}
	u := batchUsage{W: usageWordsFor(lang)}
	if total.Answers > 0 {
		u.Rows = append(u.Rows, total)
	}
	if est.Answers > 0 {
		u.Rows = append(u.Rows, est)
	}
	u.Rows = append(u.Rows, sorted(models)...)
	if door {
		u.Rows = append(u.Rows, sorted(tokens)...)
	}
	return u
}

type usageKey struct {
	of, name  string
	estimated bool
}

func rowFor(m map[usageKey]*usageRow, k usageKey) *usageRow {
	r, ok := m[k]
	if !ok {
		r = &usageRow{Of: k.of, Name: k.name, Estimated: k.estimated}
		m[k] = r
	}
	return r
}

func sorted(m map[usageKey]*usageRow) []usageRow {
	out := make([]usageRow, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b usageRow) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(fmt.Sprint(a.Estimated), fmt.Sprint(b.Estimated)))
	})
	return out
}

// usageSection is the batch page's tokens table; each row's data-
// attributes carry its numbers for scripts and tests.
const usageSection = `{{with .Usage}}{{if .Rows}}<h2 id="tokens">{{.W.Tokens}}</h2>
<table class="batch-usage"><tr><th>{{.W.What}}</th><th></th><th>{{.W.Answers}}</th><th>{{.W.Prompt}}</th><th>{{.W.Cached}}</th><th>{{.W.Completion}}</th><th>{{.W.Reasoning}}</th><th>{{.W.Cost}}</th></tr>
{{range .Rows}}<tr class="usage" data-of="{{.Of}}" data-name="{{.Name}}" data-estimated="{{.Estimated}}" data-answers="{{.Answers}}" data-prompt="{{.Prompt}}" data-completion="{{.Completion}}" data-reasoning="{{.Reasoning}}" data-cached="{{.Cached}}" data-cost="{{.Cost}}"><td>{{if eq .Of "model"}}{{$.Usage.W.Model}} <span translate="no">{{.Name}}</span>{{else if eq .Of "token"}}{{$.Usage.W.Token}} {{with .Name}}<span translate="no">{{.}}</span>{{else}}{{$.Usage.W.NoToken}}{{end}}{{else}}{{$.Usage.W.Batch}}{{end}}</td><td>{{if .Estimated}}{{$.Usage.W.Estimated}}{{else}}{{$.Usage.W.Reported}}{{end}}</td><td>{{.Answers}}</td><td>{{.Prompt}}</td><td>{{.Cached}}</td><td>{{.Completion}}</td><td>{{.Reasoning}}</td><td>{{.Cost}}</td></tr>
{{end}}</table>
<div class="meta">{{.W.Note}}</div>{{end}}{{end}}
`
