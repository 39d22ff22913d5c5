package status

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// maxReason is how much of a reason or error the lists keep, in bytes.
const maxReason = 300

// failed lists the latest failed tasks of both lanes, newest finishedAt
// first, and counts the rest. Only the listed ones are read in full (for
// error and errorClass, which the summary scan does not keep).
func (s *Snapshotter) failed(perLane map[taskfile.Kind][]*task) ([]Failed, int) {
	var fs []*task
	for _, k := range taskfile.Kinds {
		for _, t := range perLane[k] {
			if t.dir == taskfile.DirFailed {
				fs = append(fs, t)
			}
		}
	}
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i].sum.finishedAt, fs[j].sum.finishedAt
		if !a.Equal(b) {
			return a.After(b)
		}
		if fs[i].lane != fs[j].lane {
			return fs[i].lane < fs[j].lane
		}
		return fs[i].sum.id < fs[j].sum.id
	})
	more := max(len(fs)-ListCap, 0)
	fs = fs[:min(len(fs), ListCap)]
	out := make([]Failed, 0, len(fs))
	for _, t := range fs {
		f := Failed{Lane: string(t.lane), TaskID: t.sum.id, Batch: t.sum.batch, Attempt: t.sum.attempt}
		if !t.sum.finishedAt.IsZero() {
			f.FinishedAt = ptr(t.sum.finishedAt)
		}
		p := filepath.Join(s.store.Layout.Lane(t.lane, t.dir), t.name)
		if data, _, err := fsx.ReadOwn(p, taskfile.MaxRecordSize); err == nil {
			if tk, err := taskfile.DecodeRecord(data); err == nil {
				f.ErrorClass, f.Error = string(tk.ErrorClass), safetext.ClipBytes(tk.Error, maxReason)
			} else {
				f.Error = safetext.ClipBytes("unreadable task file: "+err.Error(), maxReason)
			}
		}
		out = append(out, f)
	}
	return out, more
}

// rejectedDrops lists lane k's latest rejected drops (names are their
// files in failed/), newest NAME.error first, and counts the rest.
func (s *Snapshotter) rejectedDrops(k taskfile.Kind, names []string) ([]RejectedDrop, int) {
	dir := s.store.Layout.Lane(k, taskfile.DirFailed)
	drops := make([]RejectedDrop, len(names))
	for i, n := range names {
		drops[i] = RejectedDrop{File: n}
		if fi, err := os.Lstat(filepath.Join(dir, taskfile.TrimTaskExt(n)+".error")); err == nil {
			drops[i].At = fi.ModTime().UTC()
		}
	}
	sort.Slice(drops, func(i, j int) bool {
		if !drops[i].At.Equal(drops[j].At) {
			return drops[i].At.After(drops[j].At)
		}
		return drops[i].File < drops[j].File
	})
	more := max(len(drops)-ListCap, 0)
	drops = drops[:min(len(drops), ListCap)]
	for i := range drops {
		data, _, err := fsx.ReadOwn(filepath.Join(dir, taskfile.TrimTaskExt(drops[i].File)+".error"), 64<<10)
		if err != nil {
			drops[i].Reason = "(no reason readable: " + err.Error() + ")"
			continue
		}
		line, _, _ := bytes.Cut(data, []byte("\n"))
		drops[i].Reason = safetext.ClipBytes(strings.TrimSpace(string(line)), maxReason)
	}
	return drops, more
}
