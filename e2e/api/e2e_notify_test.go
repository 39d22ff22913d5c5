//go:build unix

package api

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes/notify"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestE2E_Notify_TwoDaemons: two daemons on one spool, one of them killed
// with SIGKILL in the middle of a batch and started again later. The
// webhook receives exactly one batch.finished per batch, with its counts
// and failed ids; task.failed, account.held and lane.standby arrive.
func TestE2E_Notify_TwoDaemons(t *testing.T) {
	t.Parallel()
	stand := rig.APIStand(t, apistand.Options{RequireKey: rig.APIKey})
	hook := rig.NewHook(t)
	tail := rig.APIModels(stand.URL()) + `  - {name: web-idle, kind: web, site: idle, account: acc1}
sites:
  idle: {url: "http://127.0.0.1:9/", input: textarea, send: button, answer: .a}
notify:
  webhook: ` + strconv.Quote(hook.Url) + `
  retryBackoff: 50ms
`
	r := rig.New(t, rig.Opts{Tail: tail}, "E2E_API_KEY="+rig.APIKey)
	lock := config.RunnerLockPath(r.Profiles)
	a := r.Start()
	testkit.Wait(t, "daemon A to hold the web lock", 20*time.Second, func() bool {
		pid, _ := spool.ReadRunnerLock(lock)
		return pid == a.Cmd.Process.Pid
	})

	b := r.Start()
	standby := hook.WaitFor(t, config.EventLaneStandby, "")
	if standby.Lane != "web" || !strings.Contains(standby.Holder, strconv.Itoa(a.Cmd.Process.Pid)) {
		t.Errorf("lane.standby %+v: want the web lane, held by A", standby)
	}

	var b1 []rig.Task
	for i := range 9 {
		b1 = append(b1, rig.Task{ID: fmt.Sprintf("b1-%d", i), Model: "api-plain", Batch: "第一批", Content: fmt.Sprintf("[[duration=1500ms]] one %d", i)})
	}
	b1 = append(b1, rig.Task{ID: "b1-bad", Model: "api-plain", Batch: "第一批", Content: "[[status=400]] malformed"})
	r.Submit(b1...)
	// Kill A while it runs a task of the batch: B reclaims it (same host,
	// dead pid) and finishes the batch.
	owner := fmt.Sprintf("e2e:%d", a.Cmd.Process.Pid)
	testkit.Wait(t, "daemon A running a task of the batch", 20*time.Second, func() bool {
		for _, tk := range b1 {
			if rt := r.Read(taskfile.KindAPI, taskfile.DirRunning, tk.ID); rt != nil && rt.Owner == owner {
				return true
			}
		}
		return false
	})

	if err := a.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.Done
	for _, tk := range b1 {
		r.Final(taskfile.KindAPI, tk.ID, 60*time.Second)
	}
	fin := hook.WaitFor(t, config.EventBatchFinished, "第一批")
	if fin.Counts == nil || *fin.Counts != (notify.Counts{Success: 9, Failed: 1, Total: 10}) || fmt.Sprint(fin.Failed) != "[b1-bad]" {
		t.Errorf("batch.finished %+v counts %+v", fin, fin.Counts)
	}
	failed := hook.WaitFor(t, config.EventTaskFailed, "第一批")
	if failed.TaskID != "b1-bad" || failed.ErrorClass != "permanent" || !strings.Contains(failed.Error, "400") {
		t.Errorf("task.failed %+v", failed)
	}

	// B runs the web lane now: switching the account off holds it.
	if err := os.WriteFile(filepath.Join(r.L.Accounts(), "acc1.disabled"), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	held := hook.WaitFor(t, config.EventAccountHeld, "")
	if held.Account != "acc1" || !strings.Contains(held.Reason, "acc1.disabled") {
		t.Errorf("account.held %+v", held)
	}

	// A starts again (a new pid) and stands by; a second batch runs on both.
	a2 := r.Start()
	var b2 []rig.Task
	for i := range 4 {
		b2 = append(b2, rig.Task{ID: fmt.Sprintf("b2-%d", i), Model: "api-plain", Batch: "second", Content: fmt.Sprintf("[[duration=300ms]] two %d", i)})
	}
	r.Submit(b2...)
	for _, tk := range b2 {
		r.Final(taskfile.KindAPI, tk.ID, 30*time.Second)
	}
	hook.WaitFor(t, config.EventBatchFinished, "second")
	// A graceful stop takes a last look and sends what is queued: after
	// it, nothing more can arrive.
	a2.Stop()
	b.Stop()
	for _, batch := range []string{"第一批", "second"} {
		if got := hook.Received(config.EventBatchFinished, batch); len(got) != 1 {
			t.Errorf("batch %s: %d batch.finished events, want exactly 1: %+v", batch, len(got), got)
		}
	}
	if got := hook.Received(config.EventTaskFailed, ""); len(got) != 1 {
		t.Errorf("%d task.failed events, want 1", len(got))
	}
	// B stood by at its start, A at its restart.
	if got := hook.Received(config.EventLaneStandby, ""); len(got) != 2 || !strings.Contains(got[1].Holder, strconv.Itoa(b.Cmd.Process.Pid)) {
		t.Errorf("lane.standby events %+v: want B's at its start, then A's behind B", got)
	}
	hook.Mu.Lock()
	t.Logf("webhook: %d events: %v", len(hook.Ok), eventNames(hook.Ok))
	hook.Mu.Unlock()
}

func eventNames(es []notify.Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Event+"/"+e.Batch+e.TaskID+e.Account)
	}
	return out
}

// TestE2E_Notify_SlowReceivers: the webhook answers 500 three times, then
// 200, and gets the event; the command hangs, is killed with its child at
// its timeout, and meanwhile the lane runs its tasks.
func TestE2E_Notify_SlowReceivers(t *testing.T) {
	t.Parallel()
	stand := rig.APIStand(t, apistand.Options{RequireKey: rig.APIKey})
	hook := rig.NewHook(t, 500, 500, 500)
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	script := filepath.Join(dir, "hang.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 3600 &\necho $$ $! \"$SPOOLGATE_EVENT\" \"$SPOOLGATE_TASK\" >> \""+pids+"\"\nwait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tail := rig.APIModels(stand.URL()) + `notify:
  webhook: ` + strconv.Quote(hook.Url) + `
  command: [` + strconv.Quote(script) + `]
  timeout: 8s
  retries: 3
  retryBackoff: 50ms
  events: [task.failed]
`
	r := rig.New(t, rig.Opts{Tail: tail}, "E2E_API_KEY="+rig.APIKey)
	d := r.Start()
	r.Submit(rig.Task{ID: "bad", Model: "api-plain", Content: "[[status=400]] malformed"})
	r.Final(taskfile.KindAPI, "bad", 20*time.Second)
	var procs []int
	testkit.Wait(t, "the notify command to start", 20*time.Second, func() bool {
		data, _ := os.ReadFile(pids)
		f := strings.Fields(string(data))
		if len(f) < 4 {
			return false
		}
		if f[2] != config.EventTaskFailed || f[3] != "bad" {
			t.Fatalf("command environment: %q", data)
		}
		procs = nil
		for _, s := range f[:2] {
			p, _ := strconv.Atoi(s)
			procs = append(procs, p)
		}
		return true
	})

	// While the command hangs, the lane runs tasks.
	var more []rig.Task
	for i := range 3 {
		more = append(more, rig.Task{ID: fmt.Sprintf("next-%d", i), Model: "api-plain", Content: "quick"})
	}
	r.Submit(more...)
	for _, tk := range more {
		if got := r.Final(taskfile.KindAPI, tk.ID, 20*time.Second); got.State != taskfile.StateSuccess {
			t.Errorf("%s: %s %s", tk.ID, got.State, got.Error)
		}
	}
	alive := syscall.Kill(procs[0], 0) == nil
	if !alive {
		t.Errorf("the command was gone before the lane finished 3 quick tasks: the test proves nothing (raise timeout)")
	}
	// The webhook was not held up by the command either.
	e := hook.WaitFor(t, config.EventTaskFailed, "")
	hook.Mu.Lock()
	posts := len(hook.Posts)
	hook.Mu.Unlock()
	if e.TaskID != "bad" || posts != 4 {
		t.Errorf("webhook: event %+v after %d POSTs, want bad after 4 (500, 500, 500, 200)", e, posts)
	}
	// At its timeout the command and its child are killed.
	for _, p := range procs {
		testkit.Wait(t, fmt.Sprintf("pid %d killed at the timeout", p), 30*time.Second, func() bool { return syscall.Kill(p, 0) != nil })
	}
	testkit.Wait(t, "the kill in the daemon's log", 10*time.Second, func() bool {
		return strings.Contains(d.LogText(), "killed after its timeout 8s")
	})

	d.Stop()
}
