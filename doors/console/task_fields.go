package console

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/spoolgate/spoolgate/doors/report"
	"github.com/spoolgate/spoolgate/internal/markdown"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// extraTaskFields are the task file's fields that the task page shows
// after the common ones, when set: how a web answer was read, how it
// compares with what the page showed, and its tokens.
func extraTaskFields(t *taskfile.Task) []field {
	return []field{{K: "resultFormat", V: t.ResultFormat}, {K: "resultMethod", V: t.ResultMethod},
		{K: "resultCheck", V: t.ResultCheck}, {K: "resultDiff", V: t.ResultDiff}, {K: "usage", V: usageText(t.Usage)}}
}

// usageText is a usage as one line: "120 prompt (100 cached) + 40
// completion (30 reasoning)", ", estimated" for a web answer's count;
// "" for none.
func usageText(u taskfile.Usage) string {
	if u.IsZero() {
		return ""
	}
	s := fmt.Sprintf("%d prompt", u.PromptTokens)
	if u.CachedTokens > 0 {
		s += fmt.Sprintf(" (%d cached)", u.CachedTokens)
	}
	s += fmt.Sprintf(" + %d completion", u.CompletionTokens)
	if u.ReasoningTokens > 0 {
		s += fmt.Sprintf(" (%d reasoning)", u.ReasoningTokens)
	}
	if u.Estimated {
		s += ", estimated"
	}
	return s
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

// queueFields are a pending task's place in its lane's queue, its ETA and
// why it waits besides the tasks ahead of it, and a running task's ETA,
// from the snapshot every page reads (issue 53: a pending task's page
// said only "pending").
func (h *httpServer) queueFields(v *taskView) {
	if v.Dir != taskfile.DirPending && v.Dir != taskfile.DirRunning {
		return
	}
	st, err := h.snap.Snapshot(h.now())
	if err != nil {
		return
	}
	q := st.QueueOf(v.Lane, v.ID)
	zh := v.L.Lang == labelsZH.Lang
	word := func(k, val string) {
		if val != "" {
			v.Fields = append(v.Fields, field{K: v.L.word(fieldNamesZH, k), V: val, Word: true})
		}
	}
	if q.Place > 0 {
		if zh {
			word("queue", fmt.Sprintf("第 %d 位，共 %d 个", q.Place, q.Of))
		} else {
			word("queue", fmt.Sprintf("%d of %d", q.Place, q.Of))
		}
	}
	if !q.ETA.IsZero() {
		if zh {
			word("eta", clockZH(st.Now, q.ETA))
		} else {
			word("eta", report.ShortTime(st.Now, q.ETA))
		}
	}
	if q.Wait != nil && v.Dir == taskfile.DirPending {
		v.Fields = append(v.Fields, field{K: v.L.word(fieldNamesZH, "held"), V: waitText(v.L, st.Now, q.Wait)})
	}
}

// A task's long texts (its content, prompt and log) are folded under a
// line saying how long they are, so the page's answer and fields are not
// pushed a screen away; short ones are shown as they are.
const (
	foldLines = 30
	foldBytes = 4000
)

// fold is text in a <pre> of class cls, inside a closed <details> when it
// is long.
func fold(D detailLabels, cls, text string) template.HTML {
	pre := `<pre class="` + cls + `">` + template.HTMLEscapeString(text) + `</pre>`
	lines := strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
	if lines <= foldLines && len(text) <= foldBytes {
		return template.HTML(pre) //nolint:gosec // escaped
	}
	return template.HTML(`<details class="fold"><summary>` + template.HTMLEscapeString(fmt.Sprintf(D.Fold, lines, len(text))) + `</summary>` + pre + `</details>`) //nolint:gosec // escaped
}
