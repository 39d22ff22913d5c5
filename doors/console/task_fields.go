package console

import (
	"html/template"

	"github.com/spoolgate/spoolgate/internal/markdown"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// extraTaskFields are the task file's fields that the task page shows
// after the common ones, when set: how a web answer was read, and how it
// compares with what the page showed.
func extraTaskFields(t *taskfile.Task) []field {
	return []field{{K: "resultFormat", V: t.ResultFormat}, {K: "resultMethod", V: t.ResultMethod},
		{K: "resultCheck", V: t.ResultCheck}, {K: "resultDiff", V: t.ResultDiff}}
}

// reasoningView is a reasoning model's thinking as the task page shows
// it: collapsed under the answer, rendered and as its Markdown source.
type reasoningView struct {
	Label    string
	Text     string
	Rendered template.HTML
}

// reasoningLabels name the collapsed block, by the page's language.
var reasoningLabels = map[string]string{"en": "reasoning (the model's thinking, not part of the result)", "zh-CN": "思考过程（模型的推理，不属于结果）"}

// reasoningOf is the task's kept thinking for the task page, or nil.
func reasoningOf(lang string, t *taskfile.Task) *reasoningView {
	if t.Reasoning == "" {
		return nil
	}
	label, ok := reasoningLabels[lang]
	if !ok {
		label = reasoningLabels["en"]
	}
	v := &reasoningView{Label: label, Text: safetext.Text(t.Reasoning)}
	if html, err := markdown.Render(t.Reasoning); err == nil {
		v.Rendered = html
	}
	return v
}
