package spool

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// BatchTally is one batch as the spool's folders show it, both lanes
// together. Archived tasks are not in it.
type BatchTally struct {
	Batch                      string
	Incoming, Pending, Running int // drops not taken yet, and tasks not final
	Success, Failed, Canceled  int
	// FailedIDs are the failed tasks' ids, oldest failure first.
	FailedIDs                        []string
	FirstSubmittedAt, LastFinishedAt time.Time

	open     bool // seen not final by the scan's second look
	failedAt []time.Time
}

// Total is every task of the batch, final or not.
func (b *BatchTally) Total() int {
	return b.Incoming + b.Pending + b.Running + b.Success + b.Failed + b.Canceled
}

// Finished reports whether every task of the batch is final.
func (b *BatchTally) Finished() bool {
	return !b.open && b.Incoming+b.Pending+b.Running == 0 && b.Total() > 0
}

// BatchScanner tallies batches from the task folders, caching what it read
// of each file by (path, size, mtime) so that a scan re-reads only files
// that changed. Safe for concurrent use.
type BatchScanner struct {
	l     Layout
	mu    sync.Mutex
	cache map[string]batchEntry
}

type batchEntry struct {
	size  int64
	mtime time.Time
	sum   taskfile.Summary
}

// NewBatchScanner returns a scanner of the spool at l.
func NewBatchScanner(l Layout) *BatchScanner {
	return &BatchScanner{l: l, cache: map[string]batchEntry{}}
}

// Scan tallies every named batch. A task moves between folders while the
// scan lists them; a batch must never look finished because one of its
// tasks was between two listings, so after the final folders the drop
// boxes, pending/ and running/ are listed a second time, and a batch seen
// there is not finished. (A task moving backwards, running → pending for a
// retry, or failed → incoming for `spoolgate retry`, could otherwise be in
// neither listing.)
func (b *BatchScanner) Scan() (map[string]*BatchTally, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]*BatchTally{}
	get := func(name string) *BatchTally {
		t := out[name]
		if t == nil {
			t = &BatchTally{Batch: name}
			out[name] = t
		}
		return t
	}
	seen := map[string]bool{}
	open := []string{taskfile.DirPending, taskfile.DirRunning}
	for pass := 0; pass < 2; pass++ {
		for _, dir := range b.dropBoxes() {
			for _, batch := range readDropBatches(dir) {
				if pass == 0 {
					get(batch).Incoming++
				} else {
					get(batch).open = true
				}
			}
		}
		dirs := taskfile.TaskDirs
		if pass == 1 {
			dirs = open
		}
		for _, k := range taskfile.Kinds {
			for _, dir := range dirs {
				err := b.scanDir(k, dir, seen, func(s taskfile.Summary, mtime time.Time) {
					if s.Batch == "" {
						return
					}
					t := get(s.Batch)
					if pass == 1 {
						t.open = true
						return
					}
					t.count(dir, s, mtime)
				})
				if err != nil {
					return nil, err
				}
			}
		}
	}
	for p := range b.cache {
		if !seen[p] {
			delete(b.cache, p)
		}
	}
	for _, t := range out {
		sort.Sort(byFailedAt{t})
	}
	return out, nil
}

func (t *BatchTally) count(dir string, s taskfile.Summary, mtime time.Time) {
	if !s.SubmittedAt.IsZero() && (t.FirstSubmittedAt.IsZero() || s.SubmittedAt.Before(t.FirstSubmittedAt)) {
		t.FirstSubmittedAt = s.SubmittedAt
	}
	fin := s.FinishedAt
	if fin.IsZero() {
		fin = mtime // a final file always has finishedAt; be safe anyway
	}
	switch dir {
	case taskfile.DirPending:
		t.Pending++
		return
	case taskfile.DirRunning:
		t.Running++
		return
	case taskfile.DirDone:
		t.Success++
	case taskfile.DirFailed:
		t.Failed++
		t.FailedIDs = append(t.FailedIDs, s.TaskID)
		t.failedAt = append(t.failedAt, fin)
	case taskfile.DirCanceled:
		t.Canceled++
	}
	if fin.After(t.LastFinishedAt) {
		t.LastFinishedAt = fin
	}
}

type byFailedAt struct{ t *BatchTally }

func (s byFailedAt) Len() int { return len(s.t.FailedIDs) }
func (s byFailedAt) Less(i, j int) bool {
	if !s.t.failedAt[i].Equal(s.t.failedAt[j]) {
		return s.t.failedAt[i].Before(s.t.failedAt[j])
	}
	return s.t.FailedIDs[i] < s.t.FailedIDs[j]
}
func (s byFailedAt) Swap(i, j int) {
	s.t.FailedIDs[i], s.t.FailedIDs[j] = s.t.FailedIDs[j], s.t.FailedIDs[i]
	s.t.failedAt[i], s.t.failedAt[j] = s.t.failedAt[j], s.t.failedAt[i]
}

func (b *BatchScanner) dropBoxes() []string {
	out := []string{b.l.Incoming()}
	for _, k := range taskfile.Kinds {
		out = append(out, b.l.Lane(k, taskfile.DirIncoming))
	}
	return out
}

// scanDir calls fn for each task file of one folder (rejected drops left
// out), with its summary and mtime.
func (b *BatchScanner) scanDir(k taskfile.Kind, dir string, seen map[string]bool, fn func(taskfile.Summary, time.Time)) error {
	path := b.l.Lane(k, dir)
	ents, err := fsx.ReadDir(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	var rejected map[string]bool
	if dir == taskfile.DirFailed {
		rejected = taskfile.RejectedDrops(ents)
	}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !taskfile.IsTaskFileName(name) || fsx.IsOwnTemp(name) || rejected[taskfile.TrimTaskExt(name)] {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // moved on meanwhile
		}
		p := filepath.Join(path, name)
		seen[p] = true
		c, ok := b.cache[p]
		if !ok || c.size != fi.Size() || !c.mtime.Equal(fi.ModTime()) {
			s, ok := readSummary(p)
			if !ok {
				continue // unreadable: it belongs to no batch we can name
			}
			c = batchEntry{size: fi.Size(), mtime: fi.ModTime(), sum: s}
			b.cache[p] = c
		}
		fn(c.sum, c.mtime)
	}
	return nil
}

// readSummary reads a task file of spoolgate's own folders: the line scan
// when the file is in spoolgate's form, else a full decode.
func readSummary(p string) (taskfile.Summary, bool) {
	data, _, err := fsx.ReadOwn(p, taskfile.MaxRecordSize)
	if err != nil {
		return taskfile.Summary{}, false
	}
	if s, ok := taskfile.ScanSummary(data); ok {
		return s, true
	}
	t, err := taskfile.DecodeRecord(data)
	if err != nil {
		return taskfile.Summary{}, false
	}
	return taskfile.SummaryOf(t), true
}

// readDropBatches returns the batch of each drop in dir that names one.
// Drops are few and change all the time: they are read each time.
func readDropBatches(dir string) []string {
	ents, err := fsx.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !taskfile.IsTaskFileName(name) || fsx.IsOwnTemp(name) {
			continue
		}
		data, _, err := fsx.ReadRegular(filepath.Join(dir, name), taskfile.MaxTaskSize)
		if err != nil {
			continue
		}
		if t, err := taskfile.DecodeTask(data); err == nil && t.Batch != "" {
			out = append(out, t.Batch)
		}
	}
	return out
}
