package status

import (
	"path/filepath"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// readArchive reads the final folders of each month of lane k's archive:
// their tasks count in their final state, as if they were still in the
// lane's own folders. Archived rejected drops are not tasks: neither
// counted nor listed.
func (s *Snapshotter) readArchive(k taskfile.Kind, visited map[string]bool) ([]*task, error) {
	var out []*task
	for _, m := range s.store.Layout.ArchiveMonths(k) {
		for _, dir := range taskfile.FinalDirs {
			ts, _, err := s.readPath(k, dir, filepath.Join(m, dir), visited)
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
		}
	}
	return out, nil
}
