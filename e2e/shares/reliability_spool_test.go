//go:build unix

package shares

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/doors/cli"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// finalFolders are both lanes' done/, failed/ and canceled/, to wait on.
func finalFolders(l spool.Layout) []string {
	var dirs []string
	for _, k := range taskfile.Kinds {
		for _, d := range finalDirs {
			dirs = append(dirs, l.Lane(k, d))
		}
	}
	return dirs
}

// TestReliability_FifoTaskLogs: fifos in api/logs/ where the tasks' logs
// go (the field report: three API slots hung in running/, a cancel lost,
// two SIGTERMs not enough for 55 s). Through `spoolgate run`: tasks with
// a fifo for a log finish; a cancel reaches a running one; the daemon
// stops on one SIGTERM within shutdownGrace + 5 s, the rest back in
// pending/; each refused log is reported once on the daemon's stderr.
func TestReliability_FifoTaskLogs(t *testing.T) {
	t.Parallel()
	r := rig.New(t, rig.Opts{Fake: true, APIConc: 3})
	l := spool.NewLayout(r.Spool)
	if err := l.Create(); err != nil {
		t.Fatal(err)
	}
	quick, hung := []string{"q1", "q2", "q3"}, []string{"h1", "h2", "h3"}
	for _, id := range append(append([]string{}, quick...), hung...) {
		if err := syscall.Mkfifo(l.LogPath(taskfile.KindAPI, id), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := r.StartHost(rig.DaemonOpts{Name: "fifo"})
	in := l.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	for _, id := range quick {
		dropFile(t, in, id+".yaml", taskYAML(id, "fast", "[[duration=200ms]] "+id))
	}
	testkit.WaitFS(t, "the quick tasks done", 20*time.Second, []string{l.Lane(taskfile.KindAPI, taskfile.DirDone)}, func() bool {
		d.MustBeAlive()
		for _, id := range quick {
			if l.Locate(taskfile.KindAPI, id) != taskfile.DirDone {
				return false
			}
		}
		return true
	})
	for _, id := range hung {
		dropFile(t, in, id+".yaml", taskYAML(id, "fast", "[[hang]] "+id))
	}
	testkit.WaitFS(t, "the hanging tasks running, all three slots", 20*time.Second, []string{d.Trace}, func() bool {
		trace, _ := os.ReadFile(filepath.Join(d.Trace, "api.trace"))
		for _, id := range hung {
			if !bytes.Contains(trace, []byte("start "+id+" ")) {
				return false
			}
		}
		return true
	})
	var out, errOut bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	if err := cli.Run(context.Background(), []string{"cancel", "h1", "--spool", r.Spool}, env); err != nil {
		t.Fatalf("cancel: %v %s", err, errOut.String())
	}
	testkit.WaitFS(t, "h1 canceled", 10*time.Second, []string{l.Lane(taskfile.KindAPI, taskfile.DirCanceled)}, func() bool {
		return l.Locate(taskfile.KindAPI, "h1") == taskfile.DirCanceled
	})

	const grace = 2 * time.Second // the rig's shutdownGrace
	sent := time.Now()
	if err := d.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Done:
	case <-time.After(grace + 5*time.Second):
		t.Fatalf("the daemon did not stop within shutdownGrace + 5s of one SIGTERM")
	}
	took := time.Since(sent)
	if d.Err != nil {
		t.Errorf("the daemon exited with %v", d.Err)
	}
	for _, id := range hung[1:] {
		if w := l.Locate(taskfile.KindAPI, id); w != taskfile.DirPending {
			t.Errorf("%s in %s/, want pending/ after shutdown", id, w)
		}
	}
	lg := d.LogText()
	for _, id := range append(quick, hung...) {
		n := 0
		for _, line := range strings.Split(lg, "\n") {
			if strings.Contains(line, "task log not written") && strings.Contains(line, "taskId="+id+" ") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: the fifo log reported %d times, want once", id, n)
		}
	}
	t.Logf("reliability: fifo task logs: 3 tasks done, a cancel honoured, stopped %s after one SIGTERM (shutdownGrace %s + 5s allowed)", took.Round(time.Millisecond), grace)
}

// TestReliability_TempFilesAfterKills: SIGKILLs of `spoolgate run` under
// load leave spoolgate's own temp files; the next start removes this
// host's (their processes are gone), never a user's *.tmp drop, and the
// periodic upkeep removes another host's once older than staleAfter.
func TestReliability_TempFilesAfterKills(t *testing.T) {
	t.Parallel()
	kills, n := 12, 240
	if !testkit.Reliability() {
		kills, n = 4, 80
	}
	const stale = 3 * time.Second
	r := rig.New(t, rig.Opts{Fake: true, APIConc: 5, StaleAfter: stale})
	l := spool.NewLayout(r.Spool)
	if err := l.Create(); err != nil {
		t.Fatal(err)
	}
	in := l.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	var ids []string
	for i := range n {
		id := fmt.Sprintf("k%03d", i)
		ids = append(ids, id)
		extra := []string{}
		if i%3 == 0 {
			extra = append(extra, "output: kills/"+id+".txt")
		}
		dropFile(t, in, id+".yaml", taskYAML(id, "fast", fmt.Sprintf("[[duration=%dms]] %s", 20+i%7*10, id), extra...))
	}
	rng := rand.New(rand.NewSource(11))
	ownTemps := func() []string {
		var out []string
		filepath.WalkDir(r.Spool, func(p string, e os.DirEntry, err error) error {
			if err == nil && fsx.IsOwnTemp(e.Name()) {
				out = append(out, p)
			}
			return nil
		})
		return out
	}
	left, lastPid := 0, 0
	for k := range kills {
		d := r.StartHost(rig.DaemonOpts{Name: fmt.Sprintf("kill%02d", k)})
		d.WaitReady()
		time.Sleep(time.Duration(50+rng.Intn(250)) * time.Millisecond) // the load runs for a while: the kill's moment, not synchronization
		lastPid = d.PID()
		d.Kill()
		left += len(ownTemps())
		if finalCount(r.Spool) == n {
			break
		}
	}
	// Planted: a temp of this host whose process is gone (the last one
	// killed), another host's temp just written, and users' own temp
	// files in the drop boxes, which no rule may touch.
	planted := filepath.Join(l.Lane(taskfile.KindAPI, taskfile.DirRunning), fsx.TempFileName(fsx.HostTempTag("h1"), lastPid, 99))
	otherHost := filepath.Join(l.Lane(taskfile.KindAPI, taskfile.DirDone), fsx.TempFileName(fsx.HostTempTag("h2"), 1, 7))
	users := []string{filepath.Join(in, "mine.yaml.tmp"), filepath.Join(l.Incoming(), "upload.tmp"), filepath.Join(in, ".sg-mine.tmp")}
	for _, p := range append([]string{planted, otherHost}, users...) {
		if err := os.WriteFile(p, []byte("x"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	d := r.StartHost(rig.DaemonOpts{Name: "final"})
	d.WaitReady()
	for _, p := range ownTemps() {
		if p == otherHost || strings.HasPrefix(filepath.Base(p), ".sg-mine") {
			continue
		}
		if ti := filepath.Base(p); strings.Contains(ti, "-"+fmt.Sprint(d.PID())+"-") {
			continue // the new daemon's own, in flight
		}
		t.Errorf("after start-up, a temp of a dead process is left: %s", p)
	}
	if _, err := os.Lstat(otherHost); err != nil {
		t.Errorf("another host's fresh temp was removed at start-up: %v", err)
	}
	testkit.WaitFS(t, "another host's temp removed once older than staleAfter", 3*stale, []string{filepath.Dir(otherHost)}, func() bool {
		_, err := os.Lstat(otherHost)
		return err != nil
	})
	testkit.WaitFS(t, "every task final", 60*time.Second, finalFolders(l), func() bool { d.MustBeAlive(); return finalCount(r.Spool) == n })
	d.Stop()
	for _, p := range users {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("a user's temp file was removed: %v", err)
		}
		os.Remove(p)
	}
	a := auditSpool(t, r.Spool)
	lost, dups := a.check(t, ids, 3)
	t.Logf("reliability: temp files after %d SIGKILLs under load: %d own temp files seen after the kills, none left after the next start; another host's removed after staleAfter; users' *.tmp kept; %d tasks, %d lost, %d duplicated",
		kills, left, n, lost, dups)
}

// TestReliability_StopBoundedWhenStuck: a runner blocked where no cancel
// reaches it (a call into a hung share) does not hold the daemon: one
// SIGTERM ends it within shutdownGrace + 5 s, saying why, and the next
// start reclaims the task (its owner is gone) and runs it.
func TestReliability_StopBoundedWhenStuck(t *testing.T) {
	t.Parallel()
	r := rig.New(t, rig.Opts{Fake: true})
	l := spool.NewLayout(r.Spool)
	d := r.StartHost(rig.DaemonOpts{Name: "stuck"})
	d.WaitReady()
	dropFile(t, l.Lane(taskfile.KindAPI, taskfile.DirIncoming), "stuck.yaml", taskYAML("stuck", "fast", "[[stuck]] x"))
	testkit.WaitFS(t, "the stuck call started", 20*time.Second, []string{d.Trace}, func() bool {
		trace, _ := os.ReadFile(filepath.Join(d.Trace, "api.trace"))
		return bytes.Contains(trace, []byte("start stuck "))
	})
	const grace = 2 * time.Second // the rig's shutdownGrace
	sent := time.Now()
	if err := d.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.Done:
	case <-time.After(grace + 5*time.Second + 2*time.Second):
		t.Fatalf("the daemon did not stop within shutdownGrace + 5s of one SIGTERM")
	}
	took := time.Since(sent)
	if took < grace+5*time.Second-500*time.Millisecond {
		t.Errorf("stopped after %s: the stuck runner was not waited for at all", took)
	}
	if d.Err == nil || !strings.Contains(d.LogText(), "still blocked after shutdownGrace + 5s") {
		t.Errorf("exit %v; want a failure that says why:\n%s", d.Err, testkit.Tail(d.LogText(), 10))
	}
	if w := l.Locate(taskfile.KindAPI, "stuck"); w != taskfile.DirRunning {
		t.Errorf("stuck in %s/, want running/ for the next start", w)
	}
	d2 := r.StartHost(rig.DaemonOpts{Name: "after"})
	testkit.WaitFS(t, "the task reclaimed and done", 20*time.Second, []string{l.Lane(taskfile.KindAPI, taskfile.DirDone)}, func() bool {
		d2.MustBeAlive()
		return l.Locate(taskfile.KindAPI, "stuck") == taskfile.DirDone
	})
	d2.Stop()
	t.Logf("reliability: a runner stuck past cancel: the daemon stopped %s after one SIGTERM (shutdownGrace %s + 5s), the next start ran the task", took.Round(time.Millisecond), grace)
}
