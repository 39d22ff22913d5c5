package taskfile

import (
	"fmt"
)

// RejectError is why a drop was refused. Its message is one line that names
// the field or YAML line at fault; it goes into NAME.error.
type RejectError struct {
	Class ErrorClass // invalid or duplicate
	Msg   string
}

func (e *RejectError) Error() string { return e.Msg }

// Rejectf is a RejectError of class c whose message, formatted, is folded
// into one line.
func Rejectf(c ErrorClass, format string, args ...any) *RejectError {
	return &RejectError{Class: c, Msg: OneLine(fmt.Sprintf(format, args...))}
}
