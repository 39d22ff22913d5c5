package status

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Default per-task durations, used for a lane's ETA until it has a success
// to measure. They are the middle of the field report's observed ranges:
// API 8-20 s, web 31 s to 6 min.
const (
	DefaultAPIDuration = 15 * time.Second
	DefaultWebDuration = 2 * time.Minute
)

// medianWindow is how many of a lane's latest successes its ETA looks at.
const medianWindow = 50

// Snapshotter takes snapshots of one spool, caching what it parsed of each
// task file by (path, size, mtime), and the listing of each finished
// folder by its mtime, so a long-lived caller (the daemon's HTTP pages)
// re-reads only the files that changed, and does not list again a folder
// of a year's finished tasks that has not changed. Safe for concurrent use.
type Snapshotter struct {
	cfg   *config.Config
	store *spool.Store
	live  func() []taskfile.LaneInfo
	// Archive adds the tasks of each lane's archive/ to the counts
	// (`status --archive`); set it before the first Snapshot.
	Archive bool

	mu sync.Mutex
	// folders: what was read of each task folder, by path (folders.go).
	folders map[string]*folder
	wall    func() time.Time // the wall clock that folder listings are timed by
	// archiveCached: folders holds archive months that the timeline read
	// (readArchiveFrom prunes them).
	archiveCached bool
}

// NewSnapshotter returns a Snapshotter of the store's spool, reading it
// through the process's one Store (its seal key included). live, if not
// nil, is the running daemon's own view of its lanes; it adds what only
// the daemon knows (that its web lane is in standby).
func NewSnapshotter(store *spool.Store, live func() []taskfile.LaneInfo) *Snapshotter {
	return &Snapshotter{cfg: store.Cfg, store: store, live: live, folders: map[string]*folder{}, wall: time.Now}
}

// task is one task file seen in a snapshot.
type task struct {
	lane taskfile.Kind
	dir  string
	name string // file name in dir
	path string // the file's path (dir's folder, or an archive month's)
	sum  summary
}

// Snapshot reads the spool and returns its status at now.
func (s *Snapshotter) Snapshot(now time.Time) (*Status, error) {
	st, _, err := s.snapshot(now)
	return st, err
}

// snapshot is Snapshot, and the tasks it read, by lane.
func (s *Snapshotter) snapshot(now time.Time) (*Status, map[taskfile.Kind][]*task, error) {
	now = now.UTC()
	st := &Status{Version: SchemaVersion, Spool: s.store.Layout.Root, Now: now, Lanes: []Lane{}, Batches: []Batch{}, Failed: []Failed{}}
	st.Shares = spool.ReadProbes(s.store.Layout)
	if fi, err := os.Stat(s.store.Layout.Root); err != nil {
		return nil, nil, fmt.Errorf("read spool: %w", err)
	} else if !fi.IsDir() {
		return nil, nil, fmt.Errorf("read spool: %s is not a folder", s.store.Layout.Root)
	}
	var live map[taskfile.Kind]taskfile.LaneInfo
	if s.live != nil {
		live = map[taskfile.Kind]taskfile.LaneInfo{}
		for _, li := range s.live() {
			live[li.Kind] = li
		}
	}

	s.mu.Lock()
	visited := map[string]bool{}
	perLane := map[taskfile.Kind][]*task{}
	rejected := map[taskfile.Kind][]string{}
	for _, k := range taskfile.Kinds {
		for _, dir := range taskfile.TaskDirs {
			ts, rej, err := s.readDir(k, dir, visited)
			if err != nil {
				s.mu.Unlock()
				return nil, nil, err
			}
			perLane[k] = append(perLane[k], ts...)
			rejected[k] = append(rejected[k], rej...)
		}
		if s.Archive {
			ts, err := s.readArchive(k, visited)
			if err != nil {
				s.mu.Unlock()
				return nil, nil, err
			}
			perLane[k] = append(perLane[k], ts...)
		}
	}
	// The timeline's archive months are its to prune (timeline.go).
	s.pruneFolders(visited, false)
	if s.Archive {
		s.pruneFolders(visited, true)
	}
	s.mu.Unlock()

	st.Incoming = countDrops(s.store.Layout.Incoming())
	batches := map[string]*Batch{}
	batchLanes := map[string]map[taskfile.Kind]*BatchLane{}
	disabled := map[string]bool{}
	holds := s.holds(st, now)
	for _, k := range taskfile.Kinds {
		ln, shares := s.lane(k, perLane[k], len(rejected[k]), now, live, disabled, holds)
		ln.RejectedDrops, ln.RejectedMore = s.rejectedDrops(k, rejected[k])
		st.Lanes = append(st.Lanes, ln)
		for name, bl := range shares {
			b := batches[name]
			if b == nil {
				b = &Batch{Batch: name, Lanes: []BatchLane{}}
				batches[name] = b
				batchLanes[name] = map[taskfile.Kind]*BatchLane{}
			}
			batchLanes[name][k] = bl
		}
	}
	st.Failed, st.FailedMore = s.failed(perLane)
	st.Foreign = s.store.CheckForeign()
	if len(st.Foreign) > ListCap {
		st.Foreign, st.ForeignMore = st.Foreign[:ListCap], len(st.Foreign)-ListCap
	}
	names := make([]string, 0, len(batches))
	for n := range batches {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b := batches[n]
		b.ETA = ETA{Seconds: ptr(0.0)}
		for _, k := range taskfile.Kinds {
			bl := batchLanes[n][k]
			if bl == nil {
				continue
			}
			bl.Progress = progressOf(bl.Counts)
			b.Lanes = append(b.Lanes, *bl)
			c := &b.Counts
			c.Pending += bl.Counts.Pending
			c.Running += bl.Counts.Running
			c.Success += bl.Counts.Success
			c.Failed += bl.Counts.Failed
			c.Canceled += bl.Counts.Canceled
			c.Total += bl.Counts.Total
			b.Tokens.Sum(bl.Tokens)
			switch {
			case b.ETA.Seconds == nil:
			case bl.ETA.Seconds == nil:
				b.ETA = ETA{Note: bl.Lane + ": " + bl.ETA.Note}
			case *bl.ETA.Seconds >= *b.ETA.Seconds:
				b.ETA = ETA{Seconds: bl.ETA.Seconds, Note: bl.ETA.Note}
			}
		}
		if b.ETA.Seconds != nil {
			b.ETA.At = ptr(now.Add(seconds(*b.ETA.Seconds)))
		}
		b.Progress = progressOf(b.Counts)
		st.Batches = append(st.Batches, *b)
	}
	return st, perLane, nil
}

// readDir lists one task folder of lane k (readPath).
func (s *Snapshotter) readDir(k taskfile.Kind, dir string, visited map[string]bool) ([]*task, []string, error) {
	return s.readPath(k, dir, s.store.Layout.Lane(k, dir), visited)
}

// countDrops counts the files in dir that intake would take.
func countDrops(dir string) int {
	ents, err := fsx.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if e.Type().IsRegular() && taskfile.IsTaskFileName(e.Name()) && !fsx.IsOwnTemp(e.Name()) {
			n++
		}
	}
	return n
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func wait(n int) string {
	if n == 1 {
		return "1 task waits"
	}
	return fmt.Sprintf("%d tasks wait", n)
}

func ptr[T any](v T) *T { return &v }

// secs is d in seconds, to the millisecond.
func secs(d time.Duration) float64 { return float64(d.Round(time.Millisecond)) / float64(time.Second) }

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
