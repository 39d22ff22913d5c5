// The reliability suite drives POSIX signals, mounts and fifos.

//go:build linux

package shares

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes/lanestest"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// inCI reports whether the tests run in CI, where a missing tool is a
// failure, not a skip (.ci/run installs what the suite needs).
func inCI() bool { return os.Getenv("CI") == "true" }

// skipOrFail skips with msg, or fails under CI=true.
func skipOrFail(t *testing.T, msg string) {
	t.Helper()
	if inCI() {
		t.Fatalf("%s (CI=true: .ci/run installs what this test needs)", msg)
	}
	t.Skip(msg)
}

// mountBindfs mounts backing at mnt with bindfs (FUSE), as a network share
// would present another host's folder: writes made in backing reach the
// mount without any inotify event. It is unmounted at cleanup, after the
// daemons the test starts later are killed (cleanups run in reverse).
func mountBindfs(t *testing.T, backing, mnt string) {
	t.Helper()
	bin, err := exec.LookPath("bindfs")
	if err != nil {
		skipOrFail(t, "bindfs is not installed (Debian: apt-get install bindfs): no FUSE share to test on")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		skipOrFail(t, "/dev/fuse is missing: FUSE is not available here")
	}
	for _, d := range []string{backing, mnt} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(bin, backing, mnt).CombinedOutput(); err != nil {
		skipOrFail(t, fmt.Sprintf("bindfs %s %s: %v: %s", backing, mnt, err, out))
	}
	t.Cleanup(func() {
		for _, args := range [][]string{{"-u", mnt}, {"-uz", mnt}} {
			if exec.Command("fusermount", args...).Run() == nil {
				return
			}
		}
		syscall.Unmount(mnt, syscall.MNT_DETACH)
	})
}

// noInotifyThrough checks the premise of the share tests: a file made in
// backing raises no inotify event on the mount. If it did, the tests would
// prove nothing about rescans.
func noInotifyThrough(t *testing.T, backing, mnt string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(backing, "probe"), 0o750); err != nil {
		t.Fatal(err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(filepath.Join(mnt, "probe")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(backing, "probe", "x.yaml"), []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.Events:
		t.Fatalf("an inotify event crossed the FUSE mount (%v): the share test would not test rescans", ev)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := os.Stat(filepath.Join(mnt, "probe", "x.yaml")); err != nil {
		t.Fatalf("the file made in the backing folder is not visible through the mount: %v", err)
	}
	os.RemoveAll(filepath.Join(backing, "probe"))
}

// TestReliability_NetworkShare: the daemon watches its spool through a FUSE
// mount while tasks are written into the backing folder, as another host on
// an SMB/NFS share writes them. No inotify event reaches the daemon; every
// task must still be taken within rescan + settle.
func TestReliability_NetworkShare(t *testing.T) {
	base := t.TempDir()
	backing, mnt := filepath.Join(base, "backing"), filepath.Join(base, "mnt")
	mountBindfs(t, backing, mnt)
	noInotifyThrough(t, backing, mnt)

	r := rig.New(t, rig.Opts{Fake: true, Spool: filepath.Join(mnt, "spool")})
	d := r.StartHost(rig.DaemonOpts{Name: "share"})
	d.WaitReady()
	bl := spool.NewLayout(filepath.Join(backing, "spool"))
	bound := r.Opts.Rescan + r.Opts.Settle
	// slack: intake itself, six drops in a row over FUSE (fsyncs, link+unlink
	// moves), on two cores under -race.
	slack := time.Second
	var ids []string
	var worst time.Duration
	dirs := []string{bl.Incoming(), bl.Lane(taskfile.KindAPI, taskfile.DirIncoming), bl.Lane(taskfile.KindWeb, taskfile.DirIncoming)}
	for round := range 5 {
		dropped := map[string]time.Time{}
		for i := range 6 {
			id := fmt.Sprintf("share-%d-%d", round, i)
			ids = append(ids, id)
			dir := dirs[i%3]
			model := "fast"
			if dir == dirs[2] {
				model = "chat"
			}
			dropFile(t, dir, id+".yaml", taskYAML(id, model, "shared "+id+" [[duration=20ms]]"))
			dropped[filepath.Join(dir, id+".yaml")] = time.Now()
		}
		testkit.Wait(t, "the round's drops taken", 10*time.Second, func() bool {
			for p, at := range dropped {
				if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
					worst = max(worst, time.Since(at))
					delete(dropped, p)
				}
			}
			return len(dropped) == 0
		})

		d.MustBeAlive()
	}
	if worst > bound+slack {
		t.Errorf("a drop waited %s on the share: over rescan %s + settle %s (+%s slack)", worst, r.Opts.Rescan, r.Opts.Settle, slack)
	}
	testkit.Wait(t, "every task final", 30*time.Second, func() bool { return finalCount(r.Spool) >= len(ids) })
	d.Stop()
	auditSpool(t, r.Spool).check(t, ids, 3)
	t.Logf("reliability: network share: %d drops written behind a FUSE mount, no inotify; slowest taken after %s (bound rescan+settle %s)",
		len(ids), worst.Round(time.Millisecond), bound)
}

// TestReliability_ShareTwoHosts: two daemons with different host values,
// each through its own FUSE mount of one backing folder (two machines on
// one share), with their own browser profiles. Every task runs exactly
// once: the no-replace move decides each claim.
func TestReliability_ShareTwoHosts(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	backing := filepath.Join(base, "backing")
	mntA, mntB := filepath.Join(base, "mnt-a"), filepath.Join(base, "mnt-b")
	mountBindfs(t, backing, mntA)
	mountBindfs(t, backing, mntB)

	// Generous liveness: under load a slow FUSE fsync must not make a live
	// attempt look stale; that reclaim would be a legitimate second run
	// (and FUSE has no atomic fence), and this test is about claims.
	ra := rig.New(t, rig.Opts{Fake: true, Spool: filepath.Join(mntA, "spool"), StaleAfter: 5 * time.Second})
	rb := rig.New(t, rig.Opts{Fake: true, Spool: filepath.Join(mntB, "spool"), StaleAfter: 5 * time.Second})
	a := ra.StartHost(rig.DaemonOpts{Name: "a", Host: "host-a", Profiles: filepath.Join(ra.Dir, "prof")})
	b := rb.StartHost(rig.DaemonOpts{Name: "b", Host: "host-b", Profiles: filepath.Join(rb.Dir, "prof")})
	a.WaitReady()
	b.WaitReady()
	bl := spool.NewLayout(filepath.Join(backing, "spool"))
	n := 120
	if !testkit.Reliability() {
		n = 40
	}
	var ids []string
	for i := range n {
		id := fmt.Sprintf("two-%03d", i)
		ids = append(ids, id)
		model, dir := "fast", bl.Lane(taskfile.KindAPI, taskfile.DirIncoming)
		switch i % 4 {
		case 0:
			model, dir = "chat", bl.Lane(taskfile.KindWeb, taskfile.DirIncoming)
		case 1:
			dir = bl.Incoming()
		}
		dropFile(t, dir, id+".yaml", taskYAML(id, model, fmt.Sprintf("two hosts %d [[duration=%dms]]", i, 10+i%30)))
	}
	testkit.Wait(t, "every task final", 60*time.Second, func() bool {
		a.MustBeAlive()
		b.MustBeAlive()
		return finalCount(filepath.Join(backing, "spool")) >= n
	})

	a.Stop()
	b.Stop()
	au := auditSpool(t, filepath.Join(backing, "spool"))
	lost, dups := au.check(t, ids, 1)
	calls := map[string][]string{}
	for _, d := range []*rig.Daemon{a, b} {
		for _, lane := range []string{"web", "api"} {
			for _, c := range readTrace(t, filepath.Join(d.Trace, lane+".trace"), 0) {
				calls[c.id] = append(calls[c.id], d.Name)
			}
		}
	}
	byA, byB, twice := 0, 0, 0
	for _, id := range ids {
		switch cs := calls[id]; {
		case len(cs) != 1:
			twice++
			t.Errorf("task %s ran %d times (%v): want exactly once", id, len(cs), cs)
		case cs[0] == "a":
			byA++
		default:
			byB++
		}
		if tk := au.tasks[id]; tk != nil && tk.State != taskfile.StateSuccess {
			t.Errorf("task %s ended %s: %s", id, tk.State, tk.Error)
		}
	}
	t.Logf("reliability: share, two hosts: %d tasks, host-a ran %d, host-b ran %d, ran twice %d, lost %d, duplicates %d",
		n, byA, byB, twice, lost, dups)
}

// TestReliability_FullDisk puts the spool on a 2 MiB tmpfs and fills it
// while tasks run and drops arrive. No task file may be truncated or lost;
// the daemon logs the cause and keeps running, and once space is freed
// every task ends final.
func TestReliability_FullDisk(t *testing.T) {
	t.Parallel()
	disk := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(disk, 0o750); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", disk).CombinedOutput(); err != nil {
		skipOrFail(t, fmt.Sprintf("cannot mount a small tmpfs (needs root): %v: %s", err, strings.TrimSpace(string(out))))
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(disk, 0); err != nil {
			syscall.Unmount(disk, syscall.MNT_DETACH)
		}
	})
	r := rig.New(t, rig.Opts{Fake: true, Spool: filepath.Join(disk, "spool")})
	d := r.StartHost(rig.DaemonOpts{Name: "full"})
	d.WaitReady()
	l := spool.NewLayout(r.Spool)
	var ids []string
	for i := range 30 {
		id := fmt.Sprintf("full-%02d", i)
		ids = append(ids, id)
		model, lane := "fast", taskfile.KindAPI
		if i%6 == 0 {
			model, lane = "chat", taskfile.KindWeb
		}
		dropFile(t, l.Lane(lane, taskfile.DirIncoming), id+".yaml",
			taskYAML(id, model, fmt.Sprintf("full disk %d [[duration=150ms]] %s", i, strings.Repeat("x", 3000)), "output: out/"+id+".txt"))
	}
	// The sizes matter: a rewrite writes into the file the last one
	// swapped out (spool's spares), which on a full disk succeeds while
	// the new version fits the old one's pages (4 KB on tmpfs). A final
	// record (content and answer, about 6 KB) and a late drop (over 6 KB)
	// do not fit the spare they get, so they meet the full disk.
	// Drops that arrive while the disk is full: staged now under dot
	// names (writing needs space), renamed into place once it is full.
	var late []string
	for i := range 8 {
		id := fmt.Sprintf("late-%02d", i)
		ids, late = append(ids, id), append(late, id)
		if err := os.WriteFile(filepath.Join(l.Lane(taskfile.KindAPI, taskfile.DirIncoming), "."+id), taskYAML(id, "fast", "late "+id+" "+strings.Repeat("y", 6000)), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Wait(t, "some tasks done", 20*time.Second, func() bool { return finalCount(r.Spool) >= 3 })

	filler := filepath.Join(disk, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	// fill takes every free block, down to the last bytes, so that even
	// small writes fail. It goes on while the test holds the disk full:
	// the daemon frees space of its own (a spare it lets go, a temp it
	// removes), which on a real full disk other writers take at once.
	chunk := make([]byte, 16<<10)
	fill := func() {
		for _, n := range []int{len(chunk), 4096, 512, 64, 1} {
			for {
				if _, err := f.Write(chunk[:n]); err != nil {
					if !errors.Is(err, syscall.ENOSPC) {
						t.Errorf("fill: %v", err)
					}
					break
				}
			}
		}
	}
	fill()
	stopFill, fillDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(fillDone)
		tick := time.NewTicker(time.Millisecond) // a competing writer's pace, not a synchronization
		defer tick.Stop()
		for {
			select {
			case <-stopFill:
				return
			case <-tick.C:
				fill()
			}
		}
	}()
	// Stopped before the space returns, or at the test's end if it ends
	// first: the filler must not write, nor report, after the test, nor
	// hold the file system busy.
	stopFilling := sync.OnceFunc(func() { close(stopFill); <-fillDone; f.Close() })
	t.Cleanup(stopFilling)
	fullAt := time.Now()
	for _, id := range late {
		if err := os.Rename(filepath.Join(l.Lane(taskfile.KindAPI, taskfile.DirIncoming), "."+id), filepath.Join(l.Lane(taskfile.KindAPI, taskfile.DirIncoming), id+".yaml")); err != nil {
			t.Fatal(err)
		}
	}
	logBefore := len(d.LogText())
	// Held full until the late drops' intake and some task writes have
	// failed for want of space.
	// A drop meets it at intake or at its claim's mark; a running task at
	// a heartbeat, its final record or its output.
	testkit.Wait(t, "the daemon logs the full disk for drops and running tasks", 20*time.Second, func() bool {
		lg := d.LogText()[logBefore:]
		return (strings.Contains(lg, "intake failed") || strings.Contains(lg, "mark running failed")) &&
			(strings.Contains(lg, "heartbeat write failed") || strings.Contains(lg, "final write failed") || strings.Contains(lg, "error=\"output: write"))
	})

	d.MustBeAlive()
	// While full: every task file that exists parses (none truncated).
	walkTasks(t, r.Spool, func(p string) {
		if _, err := spool.ReadTaskFile(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("while full: %v", err) // moved meanwhile is fine; truncated is not
		}
	})
	if os.Getenv("SPOOLGATE_RELIABILITY_DEBUG") != "" {
		t.Logf("log while full:\n%s", d.LogText()[logBefore:])
	}
	fullFor := time.Since(fullAt)
	whileFull := d.LogText()[logBefore:]
	logWhileFull := strings.Count(whileFull, "\n")
	// A full disk must not turn a lane into a busy loop: each failing
	// claim waits a second before it is tried again.
	if n := strings.Count(whileFull, "mark running failed"); float64(n) > 50*max(fullFor.Seconds(), 1) {
		t.Errorf("%d claims failed in %s while the disk was full: a busy loop", n, fullFor)
	}
	stopFilling()
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	testkit.Wait(t, "every task final after space is freed", 60*time.Second, func() bool {
		d.MustBeAlive()
		return finalCount(r.Spool) >= len(ids)
	})

	d.Stop()
	au := auditSpool(t, r.Spool)
	lost, dups := au.check(t, ids, 3)
	notDone := 0
	for _, id := range ids {
		tk := au.tasks[id]
		if tk == nil {
			continue
		}
		if tk.State != taskfile.StateSuccess {
			notDone++
			t.Logf("reliability: full disk: %s ended %s after %d attempts: %s", id, tk.State, tk.Attempt, tk.Error)
			continue
		}
		if tk.Output != "" {
			got, err := os.ReadFile(filepath.Join(l.Output(), tk.Output))
			if err != nil || string(got) != lanestest.Answer(tk.Content) {
				t.Errorf("output of %s: %q, %v", id, got, err)
			}
		}
	}
	t.Logf("reliability: full disk: %d tasks, disk full for %s (%d log lines meanwhile), lost %d, duplicates %d, not success %d",
		len(ids), fullFor.Round(time.Millisecond), logWhileFull, lost, dups, notDone)
}

// walkTasks calls fn for each task file in the task folders of both lanes.
func walkTasks(t *testing.T, root string, fn func(path string)) {
	t.Helper()
	l := spool.NewLayout(root)
	for _, k := range taskfile.Kinds {
		for _, dir := range taskfile.TaskDirs {
			ents, err := os.ReadDir(l.Lane(k, dir))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".yaml") {
					fn(filepath.Join(l.Lane(k, dir), e.Name()))
				}
			}
		}
	}
}
