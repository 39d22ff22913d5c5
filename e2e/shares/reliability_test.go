// The reliability suite drives POSIX signals, mounts and fifos.

//go:build unix

package shares

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestReliability_CrashMatrix runs tasks through both lanes and SIGKILLs
// the daemon at random moments (fixed seed), restarting it each time, with
// drops arriving both while it runs and while it is dead. At the end every
// taskId is exactly one parsed file in a final folder, attempt never
// exceeds maxRetries+1, nothing is left in incoming/, pending/, running/,
// no temp file survives start-up recovery, and the traces show the web
// lane never ran two calls at once and no task ran more often than its
// attempts allow.
//
// Full size (500 tasks, 25 kills) runs under `make soak`; `make
// test` runs 100 tasks and 5 kills, every check the same.
func TestReliability_CrashMatrix(t *testing.T) {
	t.Parallel()
	tasks, kills := 500, 25
	if !testkit.Reliability() {
		tasks, kills = 100, 5
	}
	const seed = 8
	rng := rand.New(rand.NewSource(seed))
	r := rig.New(t, rig.Opts{Fake: true})
	l := spool.NewLayout(r.Spool)
	if err := l.Create(); err != nil {
		t.Fatal(err)
	}

	type drop struct{ id, dir, name, lane string }
	var ids []string
	var drops []drop
	var cancels []drop
	web, api := 0, 0
	for i := range tasks {
		id := fmt.Sprintf("cm-%04d", i)
		ids = append(ids, id)
		d := drop{id: id, name: id + ".yaml"}
		var data []byte
		if i%5 == 0 {
			web++
			d.lane = "web"
			data = taskYAML(id, "chat", fmt.Sprintf("web %d [[duration=%dms]]", i, 10+rng.Intn(40)))
		} else {
			api++
			d.lane = "api"
			content := fmt.Sprintf("api %d [[duration=%dms]]", i, 5+rng.Intn(80))
			if i%25 == 7 {
				content += " [[status=400]]" // a permanent failure: ends in failed/
			}
			data = taskYAML(id, "fast", content)
		}
		if i%3 == 0 {
			d.dir = l.Incoming() // the lane-less drop box routes by model
		} else {
			d.dir = l.Lane(taskfile.Kind(d.lane), taskfile.DirIncoming)
		}
		if err := os.WriteFile(filepath.Join(r.Dir, "src-"+d.name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		drops = append(drops, d)
		if i%50 == 13 {
			cancels = append(cancels, d)
		}
	}
	dropChunk := func(chunk []drop) {
		for _, d := range chunk {
			data, err := os.ReadFile(filepath.Join(r.Dir, "src-"+d.name))
			if err != nil {
				t.Fatal(err)
			}
			dropFile(t, d.dir, d.name, data)
		}
		for _, c := range cancels {
			for _, d := range chunk {
				if d.id == c.id {
					if err := os.WriteFile(l.CancelPath(taskfile.Kind(c.lane), c.id), nil, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}

	chunks := kills + 1
	killTimes := map[int]int64{}
	traceOf := func(gen int) string { return filepath.Join(r.Dir, fmt.Sprintf("trace-gen%02d", gen)) }
	begin := time.Now()
	for gen := range kills {
		chunk := drops[gen*tasks/chunks : (gen+1)*tasks/chunks]
		if gen%3 == 1 {
			dropChunk(chunk) // dropped while no daemon runs
		}
		d := r.StartHost(rig.DaemonOpts{Name: fmt.Sprintf("gen%02d", gen), Trace: traceOf(gen)})
		if gen%3 != 1 {
			dropChunk(chunk)
		}
		// A random kill moment: anywhere from start-up recovery to the
		// middle of a busy lane.
		time.Sleep(time.Duration(rng.Intn(800)) * time.Millisecond)
		killTimes[gen] = d.Kill()
	}
	// Crash leftovers: temp files younger than a minute are left alone by
	// recovery (they may be a live writer's on a share); age them as the
	// minute that a real restart takes would.
	temps := 0
	old := time.Now().Add(-2 * time.Minute)
	filepath.WalkDir(r.Spool, func(p string, e os.DirEntry, err error) error {
		if err == nil && fsx.IsOwnTemp(e.Name()) {
			temps++
			os.Chtimes(p, old, old)
		}
		return nil
	})
	last := r.StartHost(rig.DaemonOpts{Name: "final", Trace: traceOf(kills)})
	dropChunk(drops[kills*tasks/chunks:])
	testkit.Wait(t, fmt.Sprintf("all %d tasks final", tasks), 3*time.Minute, func() bool {
		last.MustBeAlive()
		return finalCount(r.Spool) >= tasks
	})

	last.Stop()
	took := time.Since(begin)

	a := auditSpool(t, r.Spool)
	maxAttempts := r.Opts.MaxRetries + 1
	lost, dups := a.check(t, ids, maxAttempts)

	// The traces, generation by generation: a call cut by a kill ends at
	// the kill.
	var webCalls []call
	calls := map[string]int{}
	cut := 0
	for gen := 0; gen <= kills; gen++ {
		for _, lane := range []string{"web", "api"} {
			cs := readTrace(t, filepath.Join(traceOf(gen), lane+".trace"), killTimes[gen])
			for _, c := range cs {
				calls[c.id]++
				if c.cut {
					cut++
				}
			}
			if lane == "web" {
				webCalls = append(webCalls, cs...)
			}
		}
	}
	for _, o := range overlaps(webCalls) {
		t.Errorf("web lane overlapped: %s", o)
	}
	reruns, canceledEarly := 0, 0
	for _, id := range ids {
		tk := a.tasks[id]
		if tk == nil {
			continue
		}
		if calls[id] > max(tk.Attempt, 1) {
			t.Errorf("task %s ran %d times with attempt %d: a call without an attempt of its own", id, calls[id], tk.Attempt)
		}
		if calls[id] > 1 {
			reruns++
		}
		if tk.State == taskfile.StateSuccess && calls[id] == 0 {
			t.Errorf("task %s succeeded without a traced call", id)
		}
		if tk.State == taskfile.StateCanceled && calls[id] == 0 {
			canceledEarly++
		}
	}
	t.Logf("reliability: crash matrix: %d tasks (%d web, %d api), %d SIGKILLs survived, seed %d, %s",
		tasks, web, api, kills, seed, took.Round(time.Millisecond))
	t.Logf("reliability: crash matrix: tasks lost %d, duplicates %d, done %d, failed %d, canceled %d",
		lost, dups, a.states[taskfile.DirDone], a.states[taskfile.DirFailed], a.states[taskfile.DirCanceled])
	t.Logf("reliability: crash matrix: %d calls cut by a kill, %d tasks ran more than once (at-least-once after a kill), %d temp files left by kills and removed by recovery, web calls %d with 0 overlaps",
		cut, reruns, temps, len(webCalls))
}

// TestReliability_FencingSIGSTOP is issue 3's acceptance: daemon A (host a)
// runs a long web task and is frozen with SIGSTOP past staleAfter; daemon B
// (host b, another machine: its own profiles) reclaims and finishes it;
// A, thawed, must write nothing: the one final record is B's.
func TestReliability_FencingSIGSTOP(t *testing.T) {
	r := rig.New(t, rig.Opts{Fake: true})
	a := r.StartHost(rig.DaemonOpts{Name: "a", Host: "a", Profiles: filepath.Join(r.Dir, "prof-a")})
	l := spool.NewLayout(r.Spool)
	a.WaitReady()
	dropFile(t, l.Lane(taskfile.KindWeb, taskfile.DirIncoming), "fence.yaml", taskYAML("fence", "chat", "fenced [[duration=3s]]"))
	testkit.Wait(t, "A's call starts", 10*time.Second, func() bool {
		return len(readTrace(t, filepath.Join(a.Trace, "web.trace"), 1)) > 0
	})

	if err := a.Cmd.Process.Signal(stopSignal); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	b := r.StartHost(rig.DaemonOpts{Name: "b", Host: "b", Profiles: filepath.Join(r.Dir, "prof-b")})
	testkit.Wait(t, "B reclaims and starts the task", 15*time.Second, func() bool {
		return len(readTrace(t, filepath.Join(b.Trace, "web.trace"), 1)) > 0
	})

	reclaimedAfter := time.Since(stopped)
	running, err := spool.ReadTaskFile(l.TaskPath(taskfile.KindWeb, taskfile.DirRunning, "fence"))
	if err != nil {
		t.Fatalf("B's running record: %v", err)
	}
	if !strings.HasPrefix(running.Owner, "b:") || running.Attempt != 2 {
		t.Fatalf("running record: owner %q attempt %d, want b:* attempt 2", running.Owner, running.Attempt)
	}
	if err := a.Cmd.Process.Signal(contSignal); err != nil {
		t.Fatal(err)
	}
	// A wakes while B still runs the task: its next heartbeat finds the
	// file is B's, and it stops writing.
	a.WaitLog("no longer ours", 10*time.Second)
	testkit.Wait(t, "the task done", 20*time.Second, func() bool {
		return l.Locate(taskfile.KindWeb, "fence") == taskfile.DirDone
	})

	a.MustBeAlive()
	b.Stop()
	a.Stop()
	au := auditSpool(t, r.Spool)
	au.check(t, []string{"fence"}, 3)
	final := au.tasks["fence"]
	if final == nil || !strings.HasPrefix(final.Owner, "b:") || final.Attempt != 2 || final.State != taskfile.StateSuccess {
		t.Fatalf("final record %+v: want B's success at attempt 2", final)
	}
	ac := readTrace(t, filepath.Join(a.Trace, "web.trace"), 0)
	bc := readTrace(t, filepath.Join(b.Trace, "web.trace"), 0)
	if len(ac) != 1 || len(bc) != 1 {
		t.Fatalf("calls: A %d, B %d; want one each", len(ac), len(bc))
	}
	t.Logf("reliability: fencing: A frozen, B reclaimed after %s and finished; A's late call wrote nothing (final owner %s, attempt %d)",
		reclaimedAfter.Round(time.Millisecond), final.Owner, final.Attempt)
}

// TestReliability_WebStandbyTakeover is issue 3's other acceptance: a
// second daemon on the same machine (same user, same profiles) stands by
// for the web lane while the first holds the lock, and takes over when the
// first is SIGKILLed: B gets calls after the kill, the lock names B, and
// the two never ran web calls at once.
func TestReliability_WebStandbyTakeover(t *testing.T) {
	t.Parallel()
	r := rig.New(t, rig.Opts{Fake: true})
	a := r.StartHost(rig.DaemonOpts{Name: "a"})
	lock := config.RunnerLockPath(filepath.Join(r.Dir, "profiles"))
	holder := func() int { pid, _ := spool.ReadRunnerLock(lock); return pid }
	testkit.Wait(t, "A holds the web lock", 10*time.Second, func() bool { return holder() == a.PID() })
	b := r.StartHost(rig.DaemonOpts{Name: "b"})
	b.WaitLog("standby", 10*time.Second)

	l := spool.NewLayout(r.Spool)
	var ids []string
	for i := range 12 {
		id := fmt.Sprintf("sb-%02d", i)
		ids = append(ids, id)
		dropFile(t, l.Lane(taskfile.KindWeb, taskfile.DirIncoming), id+".yaml", taskYAML(id, "chat", fmt.Sprintf("standby %d [[duration=150ms]]", i)))
	}
	testkit.Wait(t, "A runs some web tasks", 20*time.Second, func() bool {
		return len(readTrace(t, filepath.Join(a.Trace, "web.trace"), 1)) >= 3
	})

	killed := a.Kill()
	testkit.Wait(t, "every task final", 30*time.Second, func() bool {
		b.MustBeAlive()
		return finalCount(r.Spool) >= len(ids)
	})

	if got := holder(); got != b.PID() {
		t.Errorf("lock file names pid %d, want B's %d", got, b.PID())
	}
	b.Stop()
	au := auditSpool(t, r.Spool)
	au.check(t, ids, 3)
	ac := readTrace(t, filepath.Join(a.Trace, "web.trace"), killed)
	bc := readTrace(t, filepath.Join(b.Trace, "web.trace"), 0)
	afterKill := 0
	for _, c := range bc {
		if c.start < killed {
			t.Errorf("B called %s before A was killed: standby broken", c.id)
		} else {
			afterKill++
		}
	}
	if afterKill == 0 {
		t.Fatal("B got no web calls after A was killed")
	}
	for _, o := range overlaps(append(ac, bc...)) {
		t.Errorf("web calls of A and B overlapped: %s", o)
	}
	t.Logf("reliability: standby: A ran %d web calls, was SIGKILLed; B took the lock and ran %d", len(ac), afterKill)
}
