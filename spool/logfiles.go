package spool

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// WriteLogFile writes a file beside the task logs, <lane>/logs/<name>
// (a failed web attempt's screenshot and page), durably and race-free
// like WriteOutput: no folder on the way is followed through a symlink.
// name must be a plain file name.
func (s *Store) WriteLogFile(k taskfile.Kind, name string, data []byte) error {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return fmt.Errorf("log file %q is not a plain file name", name)
	}
	return writeBeneath(s.Layout.Root, filepath.Join(string(k), taskfile.DirLogs, name), data, s.files.tag)
}
