package main

import "github.com/spoolgate/spoolgate/spool/taskfile"

// extraTaskFields are the task file's fields that the task page shows
// after the common ones, when present.
func extraTaskFields(t *taskfile.Task) []field { return nil }
