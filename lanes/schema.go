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
// instruction after its prompt, and the previous mismatch when the last
// attempt failed on it. A model whose endpoint takes the schema natively
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
	parts := []string{}
	if p := strings.TrimSpace(t.Prompt); p != "" {
		parts = append(parts, p)
	}
	if m != nil && m.NativeSchema() {
		parts = append(parts, "Answer in JSON.")
	} else {
		parts = append(parts, sch.Instruction())
	}
	if t.ErrorClass == taskfile.ClassSchema && t.Error != "" {
		parts = append(parts, "Your previous answer was refused: "+t.Error+". Answer again, with the JSON only.")
	}
	t.Prompt = strings.Join(parts, "\n\n")
	return t
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
