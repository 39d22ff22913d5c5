package console

import "github.com/spoolgate/spoolgate/spool/taskfile"

// extraTaskFields are the task file's fields that the task page shows
// after the common ones, when set: how a web answer was read, and how it
// compares with what the page showed.
func extraTaskFields(t *taskfile.Task) []field {
	return []field{{K: "resultFormat", V: t.ResultFormat}, {K: "resultMethod", V: t.ResultMethod},
		{K: "resultCheck", V: t.ResultCheck}, {K: "resultDiff", V: t.ResultDiff}}
}
