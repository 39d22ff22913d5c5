package status

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/spool"
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

// Snapshot reads cfg's spool once and returns its status at now.
func Snapshot(cfg *spool.Config, now time.Time) (*Status, error) {
	return NewSnapshotter(cfg, nil).Snapshot(now)
}

// Snapshotter takes snapshots of one spool, caching what it parsed of each
// task file by (path, size, mtime), so a long-lived caller (the daemon's
// HTTP page) re-reads only the files that changed. Safe for concurrent use.
type Snapshotter struct {
	cfg   *spool.Config
	store *spool.Store
	live  func() []spool.LaneInfo

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	size  int64
	mtime time.Time
	sum   summary
	ok    bool
}

// NewSnapshotter returns a Snapshotter of cfg's spool. live, if not nil,
// is the running daemon's own view of its lanes; it adds what only the
// daemon knows (that its web lane is in standby).
func NewSnapshotter(cfg *spool.Config, live func() []spool.LaneInfo) *Snapshotter {
	return &Snapshotter{cfg: cfg, store: spool.NewStore(cfg, nil), live: live, cache: map[string]cached{}}
}

// task is one task file seen in a snapshot.
type task struct {
	lane spool.Kind
	dir  string
	name string // file name in dir
	sum  summary
}

// Snapshot reads the spool and returns its status at now.
func (s *Snapshotter) Snapshot(now time.Time) (*Status, error) {
	now = now.UTC()
	st := &Status{Version: SchemaVersion, Spool: s.store.Layout.Root, Now: now, Lanes: []Lane{}, Batches: []Batch{}, Failed: []Failed{}}
	if fi, err := os.Stat(s.store.Layout.Root); err != nil {
		return nil, fmt.Errorf("read spool: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("read spool: %s is not a folder", s.store.Layout.Root)
	}
	var live map[spool.Kind]spool.LaneInfo
	if s.live != nil {
		live = map[spool.Kind]spool.LaneInfo{}
		for _, li := range s.live() {
			live[li.Kind] = li
		}
	}

	s.mu.Lock()
	seen := make(map[string]bool, len(s.cache))
	perLane := map[spool.Kind][]task{}
	rejected := map[spool.Kind][]string{}
	for _, k := range spool.Kinds {
		for _, dir := range spool.TaskDirs {
			ts, rej, err := s.readDir(k, dir, seen)
			if err != nil {
				s.mu.Unlock()
				return nil, err
			}
			perLane[k] = append(perLane[k], ts...)
			rejected[k] = append(rejected[k], rej...)
		}
	}
	for p := range s.cache {
		if !seen[p] {
			delete(s.cache, p)
		}
	}
	s.mu.Unlock()

	st.Incoming = countDrops(s.store.Layout.Incoming())
	batches := map[string]*Batch{}
	batchLanes := map[string]map[spool.Kind]*BatchLane{}
	disabled := map[string]bool{}
	for _, k := range spool.Kinds {
		ln, shares := s.lane(k, perLane[k], len(rejected[k]), now, live, disabled)
		ln.RejectedDrops, ln.RejectedMore = s.rejectedDrops(k, rejected[k])
		st.Lanes = append(st.Lanes, ln)
		for name, bl := range shares {
			b := batches[name]
			if b == nil {
				b = &Batch{Batch: name, Lanes: []BatchLane{}}
				batches[name] = b
				batchLanes[name] = map[spool.Kind]*BatchLane{}
			}
			batchLanes[name][k] = bl
		}
	}
	st.Failed, st.FailedMore = s.failed(perLane)
	names := make([]string, 0, len(batches))
	for n := range batches {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b := batches[n]
		b.ETA = ETA{Seconds: ptr(0.0)}
		for _, k := range spool.Kinds {
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
			switch {
			case b.ETA.Seconds == nil:
			case bl.ETA.Seconds == nil:
				b.ETA = ETA{Note: bl.Lane + ": " + bl.ETA.Note}
			case *bl.ETA.Seconds >= *b.ETA.Seconds:
				b.ETA = ETA{Seconds: bl.ETA.Seconds}
			}
		}
		if b.ETA.Seconds != nil {
			b.ETA.At = ptr(now.Add(seconds(*b.ETA.Seconds)))
		}
		b.Progress = progressOf(b.Counts)
		st.Batches = append(st.Batches, *b)
	}
	return st, nil
}

// readDir lists one task folder, parsing the files that changed since the
// last snapshot. In failed/ it returns the file names of rejected drops
// instead of parsing them.
func (s *Snapshotter) readDir(k spool.Kind, dir string, seen map[string]bool) ([]task, []string, error) {
	path := s.store.Layout.Lane(k, dir)
	ents, err := os.ReadDir(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil // not created yet: no daemon has run here
		}
		return nil, nil, fmt.Errorf("read spool: %w", err)
	}
	var rejectedBase map[string]bool
	if dir == spool.DirFailed {
		rejectedBase = spool.RejectedDrops(ents)
	}
	out := make([]task, 0, len(ents))
	var rejected []string
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !spool.IsTaskFileName(name) || spool.IsOwnTemp(name) {
			continue
		}
		base := spool.TrimTaskExt(name)
		if rejectedBase[base] {
			rejected = append(rejected, name)
			continue
		}
		p := filepath.Join(path, name)
		sum, ok := s.summary(p, e)
		seen[p] = true
		if !ok || sum.id == "" {
			sum.id = base // unreadable: still a task in this state
		}
		out = append(out, task{lane: k, dir: dir, name: name, sum: sum})
	}
	return out, rejected, nil
}

func (s *Snapshotter) summary(p string, e fs.DirEntry) (summary, bool) {
	fi, err := e.Info()
	if err != nil {
		return summary{}, false
	}
	if c, ok := s.cache[p]; ok && c.size == fi.Size() && c.mtime.Equal(fi.ModTime()) {
		return c.sum, c.ok
	}
	data, _, err := spool.ReadOwn(p, spool.MaxTaskSize)
	if err != nil {
		return summary{}, false // moved away meanwhile, or not a task file
	}
	sum, ok := parseSummary(data)
	s.cache[p] = cached{size: fi.Size(), mtime: fi.ModTime(), sum: sum, ok: ok}
	return sum, ok
}

// lane builds one lane's view and the batches' shares of it.
func (s *Snapshotter) lane(k spool.Kind, ts []task, rejected int, now time.Time, live map[spool.Kind]spool.LaneInfo, disabled map[string]bool) (Lane, map[string]*BatchLane) {
	cfg := s.cfg
	ln := Lane{Lane: string(k), Rejected: rejected, Running: []Running{}, Held: []Held{}}
	ln.Concurrency = cfg.API.Concurrency
	if k == spool.KindWeb {
		ln.Concurrency = spool.WebConcurrency
	}
	ln.Paused = s.store.Paused(k)
	ln.Incoming = countDrops(s.store.Layout.Lane(k, spool.DirIncoming))

	shares := map[string]*BatchLane{}
	share := func(b string) *BatchLane {
		if b == "" {
			return nil
		}
		bl := shares[b]
		if bl == nil {
			bl = &BatchLane{Lane: string(k)}
			shares[b] = bl
		}
		return bl
	}

	var done []summary
	var pending []summary
	var running []summary
	heldAccount := map[string]int{}
	heldBatch := map[string]string{} // batch -> why it cannot be estimated
	var deferred int
	var until time.Time
	for _, t := range ts {
		ln.Counts.add(t.dir)
		if bl := share(t.sum.batch); bl != nil {
			bl.Counts.add(t.dir)
		}
		switch t.dir {
		case spool.DirDone:
			done = append(done, t.sum)
		case spool.DirRunning:
			running = append(running, t.sum)
		case spool.DirPending:
			if acct := s.account(t.sum.model); acct != "" && s.disabledAccount(acct, disabled) {
				heldAccount[acct]++
				if t.sum.batch != "" {
					heldBatch[t.sum.batch] = "tasks wait on disabled account " + acct
				}
				continue
			}
			if t.sum.notBefore.After(now) {
				deferred++
				if until.IsZero() || t.sum.notBefore.Before(until) {
					until = t.sum.notBefore
				}
			}
			pending = append(pending, t.sum)
		}
	}
	ln.Progress = progressOf(ln.Counts)

	// Running tasks.
	sort.Slice(running, func(i, j int) bool {
		if !running[i].startedAt.Equal(running[j].startedAt) {
			return running[i].startedAt.Before(running[j].startedAt)
		}
		return running[i].id < running[j].id
	})
	for _, r := range running {
		rt := Running{TaskID: r.id, Model: r.model, Batch: r.batch, Attempt: r.attempt, Owner: r.owner, StartedAt: r.startedAt}
		if !r.startedAt.IsZero() {
			rt.ElapsedSeconds = secs(now.Sub(r.startedAt))
		}
		if !r.heartbeatAt.IsZero() {
			rt.HeartbeatAt = ptr(r.heartbeatAt)
		}
		age, stale := spool.Stale(spool.Summary{HeartbeatAt: r.heartbeatAt, StartedAt: r.startedAt}, now, cfg.Timing().StaleAfter)
		rt.HeartbeatAgeSeconds, rt.Stale = secs(age), stale
		ln.Running = append(ln.Running, rt)
	}

	// Held reasons. <lane>/paused holds the lane on every host;
	// <lane>/paused.HOST on that host alone (shared spools), which this
	// view names whichever host reads it.
	if _, err := os.Lstat(s.store.Layout.Paused(k)); err == nil {
		ln.Held = append(ln.Held, Held{Kind: HeldPaused, Count: ln.Counts.Pending,
			Message: fmt.Sprintf("lane paused: claims nothing new (spoolgate resume %s)", k)})
	}
	for _, host := range pausedHosts(s.store.Layout.Lane(k, "")) {
		ln.Held = append(ln.Held, Held{Kind: HeldPaused, Host: host,
			Message: fmt.Sprintf("lane paused on host %s (spoolgate resume %s --host %s)", host, k, host)})
	}
	accts := make([]string, 0, len(heldAccount))
	for a := range heldAccount {
		accts = append(accts, a)
	}
	sort.Strings(accts)
	for _, a := range accts {
		ln.Held = append(ln.Held, Held{Kind: HeldAccount, Account: a, Count: heldAccount[a],
			Message: fmt.Sprintf("%s: account %s is disabled", wait(heldAccount[a]), a)})
	}
	if k == spool.KindWeb {
		pid, host := s.runner()
		if pid != 0 {
			ln.Runner = fmt.Sprintf("pid %d on %s", pid, host)
		}
		if li, ok := live[k]; ok && li.Standby {
			h := Held{Kind: HeldStandby, Message: "this daemon is in standby: another process runs the web lane"}
			if li.Holder != "" {
				h.Message = "this daemon is in standby behind " + li.Holder
			}
			h.PID, h.Host = pid, host
			ln.Held = append(ln.Held, h)
		} else if pid != 0 && !ln.Paused && len(running) == 0 && len(pending) > deferred {
			ln.Held = append(ln.Held, Held{Kind: HeldRunner, PID: pid, Host: host, Count: len(pending) - deferred,
				Message: fmt.Sprintf("%s: the web runner lock is held by pid %d on %s, which runs no task (a login session?)", wait(len(pending)-deferred), pid, host)})
		}
	}
	if deferred > 0 {
		ln.Held = append(ln.Held, Held{Kind: HeldDeferred, Count: deferred, Until: ptr(until),
			Message: fmt.Sprintf("%s deferred until %s (retry back-off)", plural(deferred, "task"), until.Format(time.RFC3339))})
	}

	// ETA.
	typical, samples := typicalDuration(k, done)
	ln.ETA = ETA{TypicalSeconds: secs(typical), Samples: samples}
	finish := simulate(now, ln.Concurrency, typical, running, pending)
	batchEnd := map[string]time.Duration{}
	var end time.Duration
	for i, f := range finish {
		end = max(end, f)
		var b string
		if i < len(running) {
			b = running[i].batch
		} else {
			b = pending[i-len(running)].batch
		}
		if b != "" {
			batchEnd[b] = max(batchEnd[b], f)
		}
	}
	if ln.Paused && len(running)+len(pending) > 0 {
		ln.ETA.Note = "lane paused"
	} else {
		ln.ETA.Seconds = ptr(secs(end))
		ln.ETA.At = ptr(now.Add(end))
		if n := ln.Counts.Pending - len(pending); n > 0 {
			ln.ETA.Note = fmt.Sprintf("excludes %s held by a disabled account", plural(n, "task"))
		}
	}
	for b, bl := range shares {
		bl.ETA = ETA{TypicalSeconds: ln.ETA.TypicalSeconds, Samples: samples}
		left := bl.Counts.Pending + bl.Counts.Running
		switch {
		case ln.Paused && left > 0:
			bl.ETA.Note = "lane paused"
		case heldBatch[b] != "":
			bl.ETA.Note = heldBatch[b]
		default:
			bl.ETA.Seconds = ptr(secs(batchEnd[b]))
			bl.ETA.At = ptr(now.Add(batchEnd[b]))
		}
	}
	return ln, shares
}

func (s *Snapshotter) account(model string) string {
	if m, ok := s.cfg.Model(model); ok {
		return m.Account
	}
	return ""
}

func (s *Snapshotter) disabledAccount(a string, memo map[string]bool) bool {
	v, ok := memo[a]
	if !ok {
		v = s.store.AccountDisabled(a)
		memo[a] = v
	}
	return v
}

// runner returns who holds the web runner lock, by the lock file's content.
// It never takes the lock. A holder on this host whose process is gone
// (the daemon crashed, so the OS freed the lock but the content stayed)
// counts as no holder.
func (s *Snapshotter) runner() (int, string) {
	pid, host := spool.ReadRunnerLock(spool.RunnerLockPath(s.cfg.Web.Profiles))
	if pid <= 0 {
		return 0, ""
	}
	if host == s.cfg.Host && pid != os.Getpid() && spool.ProcessGone(pid) {
		return 0, ""
	}
	return pid, host
}

// typicalDuration is the median of finishedAt-startedAt over the lane's
// last medianWindow successes, or the lane's default when it has none.
func typicalDuration(k spool.Kind, done []summary) (time.Duration, int) {
	var ok []summary
	for _, d := range done {
		if !d.startedAt.IsZero() && !d.finishedAt.Before(d.startedAt) && !d.finishedAt.IsZero() {
			ok = append(ok, d)
		}
	}
	if len(ok) == 0 {
		if k == spool.KindWeb {
			return DefaultWebDuration, 0
		}
		return DefaultAPIDuration, 0
	}
	sort.Slice(ok, func(i, j int) bool { return ok[i].finishedAt.After(ok[j].finishedAt) })
	if len(ok) > medianWindow {
		ok = ok[:medianWindow]
	}
	ds := make([]time.Duration, len(ok))
	for i, d := range ok {
		ds[i] = d.finishedAt.Sub(d.startedAt)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	n := len(ds)
	if n%2 == 1 {
		return ds[n/2], n
	}
	return (ds[n/2-1] + ds[n/2]) / 2, n
}

// simulate plays the lane forward: each running task needs what is left of
// the typical duration (nothing if it has already run longer), then the
// pending tasks start in queue order (notBefore, submittedAt, taskId), each
// on the first free slot and not before its notBefore, and each takes the
// typical duration. It returns each task's finish, counted from now:
// running ones first in the given order, then pending ones in the given
// order (pending is sorted in place).
func simulate(now time.Time, concurrency int, typical time.Duration, running, pending []summary) []time.Duration {
	slots := make([]time.Duration, max(concurrency, len(running), 1))
	out := make([]time.Duration, 0, len(running)+len(pending))
	for i, r := range running {
		left := typical
		if !r.startedAt.IsZero() {
			left = max(typical-now.Sub(r.startedAt), 0)
		}
		slots[i] = left
		out = append(out, left)
	}
	sort.Slice(pending, func(i, j int) bool {
		a, b := pending[i], pending[j]
		if !a.notBefore.Equal(b.notBefore) {
			return a.notBefore.Before(b.notBefore)
		}
		if !a.submittedAt.Equal(b.submittedAt) {
			return a.submittedAt.Before(b.submittedAt)
		}
		return a.id < b.id
	})
	for _, p := range pending {
		i := 0
		for j := range slots {
			if slots[j] < slots[i] {
				i = j
			}
		}
		start := max(slots[i], p.notBefore.Sub(now))
		slots[i] = start + typical
		out = append(out, slots[i])
	}
	return out
}

// countDrops counts the files in dir that intake would take.
func countDrops(dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if e.Type().IsRegular() && spool.IsTaskFileName(e.Name()) && !spool.IsOwnTemp(e.Name()) {
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

// pausedHosts lists the hosts that have a paused.HOST file in a lane folder.
func pausedHosts(laneDir string) []string {
	ents, err := os.ReadDir(laneDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if h, ok := strings.CutPrefix(e.Name(), spool.PausedFile+"."); ok && h != "" {
			out = append(out, h)
		}
	}
	return out
}
