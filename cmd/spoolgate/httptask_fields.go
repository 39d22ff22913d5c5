package main

import (
	"reflect"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// laterFields are task file fields the task page shows after the common
// ones when the task file has them and they are set: how the answer was
// read (resultFormat, resultMethod: the web lane's reading of Markdown).
// They are looked up by name so the page shows them as soon as the task
// format carries them.
var laterFields = []struct{ name, key string }{{"ResultFormat", "resultFormat"}, {"ResultMethod", "resultMethod"}}

// extraTaskFields are those of t's later fields that are set.
func extraTaskFields(t *taskfile.Task) []field {
	v := reflect.ValueOf(t).Elem()
	var out []field
	for _, f := range laterFields {
		if fv := v.FieldByName(f.name); fv.IsValid() && fv.Kind() == reflect.String && fv.String() != "" {
			out = append(out, field{K: f.key, V: fv.String()})
		}
	}
	return out
}
