package fsx

import "os"

// TakenError is a write WriteBeneathNew refused: a file is there already
// and may not be replaced.
type TakenError struct{ Path string }

func (e *TakenError) Error() string {
	return e.Path + ": a file is there already and may not be replaced"
}

// Is makes a TakenError match os.ErrExist.
func (e *TakenError) Is(target error) bool { return target == os.ErrExist }
