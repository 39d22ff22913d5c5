package lanes

import (
	"strings"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A task with a schema (issue 52) runs the same on both lanes: its model
// is told the schema after the task's prompt, and on a retry after a
// mismatch, what did not match; its answer's JSON is checked before the
// attempt counts as a success, so an answer that does not match is an
// attempt that failed (ClassSchema), retried like a transient failure.

// withSchema is t (a clone the attempt's job owns) with its schema's
// instruction after its prompt (after its content for a model whose
// prompt is never sent), and the previous mismatch when the last attempt
// failed on it. A model whose endpoint takes the schema natively
// (schemaMode: native: the API executor sends it as response_format) is
// told only to answer in JSON: OpenAI refuses json_object unless the
// messages say "JSON", and the schema itself is in the request.
func withSchema(t *taskfile.Task, m *config.ModelConfig) *taskfile.Task {
	if t.Schema == "" {
		return t
	}
	sch, err := taskfile.CompileSchema(t.Schema)
	if err != nil {
		return t // checkSchema fails the attempt with the reason
	}
	var tell []string
	if m != nil && m.NativeSchema() {
		tell = append(tell, "Answer in JSON.")
	} else {
		tell = append(tell, sch.Instruction())
	}
	if t.ErrorClass == taskfile.ClassSchema && t.Error != "" {
		tell = append(tell, "Your previous answer was refused: "+t.Error+". Answer again, with the JSON only.")
	}
	if m != nil && m.NeedEmptyPrompt {
		// Its prompt is never sent (a reasoning model parrots one): the
		// schema would be lost with it, so it follows the content.
		t.Content = joinParts(append([]string{t.Content}, tell...))
		return t
	}
	t.Prompt = joinParts(append([]string{t.Prompt}, tell...))
	return t
}

// joinParts joins the parts that say something, a blank line apart.
func joinParts(parts []string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n\n")
}

// checkSchema takes a successful attempt's answer to its JSON, checked
// against t's schema: the result becomes that JSON (resultFormat json),
// or the attempt fails as ClassSchema with the first mismatch.
func checkSchema(t *taskfile.Task, res attempt.Result) (attempt.Result, error) {
	if t.Schema == "" {
		return res, nil
	}
	sch, err := taskfile.CompileSchema(t.Schema)
	if err != nil {
		return res, attempt.Errorf(taskfile.ClassPermanent, "%w", err)
	}
	js, err := sch.Check(res.Text)
	if err != nil {
		return res, attempt.Errorf(taskfile.ClassSchema, "%w", err)
	}
	res.Text, res.Format = js, taskfile.FormatJSON
	return res, nil
}
