package lanes

import (
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/lanes/tokens"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// estimateUsage gives a web answer the usage its page never reports: the
// text sent (the job's prompt, its schema instruction included, and
// content) and the answer, and the thinking where the model keeps it,
// counted with the model's tokenizer and marked estimated. An API answer,
// and a usage an executor did report, are left as they are; a count that
// fails leaves none (logged), never a guess of another kind.
func estimateUsage(job *attempt.Job, res attempt.Result) attempt.Result {
	m := job.Model
	if m == nil || m.Kind != taskfile.KindWeb || !res.Usage.IsZero() || res.Text == "" {
		return res
	}
	think := res.Reasoning
	if !m.KeepsReasoning() {
		think = "" // not kept, not counted: the file shows no thinking to weigh
	}
	sent := []string{job.Task.Prompt, job.Task.Content}
	if m.NeedEmptyPrompt {
		sent = sent[1:] // its prompt is never typed (browser: the page gets the content alone)
	}
	u, err := tokens.Estimate(m.Tokenizer, sent, res.Text, think)
	if err != nil {
		job.Log.Warn("token estimate failed: the answer keeps no usage", "err", err)
		return res
	}
	res.Usage = u
	return res
}
