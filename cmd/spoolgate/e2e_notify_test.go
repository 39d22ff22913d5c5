//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/lanes/notify"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// e2eHook is a webhook receiver on 127.0.0.1. It answers the first
// len(fail) POSTs with those statuses, then 200, and keeps every POST.
type e2eHook struct {
	url   string
	mu    sync.Mutex
	fail  []int
	posts []notify.Event // every POST, answered or not
	ok    []notify.Event // the ones answered 200
}

func e2eNewHook(t *testing.T, fail ...int) *e2eHook {
	t.Helper()
	h := &e2eHook{fail: fail}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var e notify.Event
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("webhook body %q: %v", body, err)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		h.posts = append(h.posts, e)
		if len(h.fail) > 0 {
			w.WriteHeader(h.fail[0])
			h.fail = h.fail[1:]
			return
		}
		h.ok = append(h.ok, e)
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/hook"
	return h
}

// received returns the events answered 200 with this name (and batch).
func (h *e2eHook) received(event, batch string) []notify.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []notify.Event
	for _, e := range h.ok {
		if e.Event == event && (batch == "" || e.Batch == batch) {
			out = append(out, e)
		}
	}
	return out
}

func (h *e2eHook) waitFor(t *testing.T, event, batch string) notify.Event {
	t.Helper()
	var got []notify.Event
	testkit.Wait(t, event+" "+batch+" at the webhook", 30*time.Second, func() bool {
		got = h.received(event, batch)
		return len(got) > 0
	})

	return got[0]
}

// TestE2E_Notify_TwoDaemons: two daemons on one spool, one of them killed
// with SIGKILL in the middle of a batch and started again later. The
// webhook receives exactly one batch.finished per batch, with its counts
// and failed ids; task.failed, account.held and lane.standby arrive.
func TestE2E_Notify_TwoDaemons(t *testing.T) {
	t.Parallel()
	stand := e2eAPIStand(t, apistand.Options{RequireKey: e2eKey})
	hook := e2eNewHook(t)
	tail := e2eAPIModels(stand.URL()) + `  - {name: web-idle, kind: web, site: idle, account: acc1}
sites:
  idle: {url: "http://127.0.0.1:9/", input: textarea, send: button, answer: .a}
notify:
  webhook: ` + strconv.Quote(hook.url) + `
  retryBackoff: 50ms
`
	r := newRig(t, rigOpts{Tail: tail}, "E2E_API_KEY="+e2eKey)
	lock := config.RunnerLockPath(r.profiles)
	a := r.start()
	testkit.Wait(t, "daemon A to hold the web lock", 20*time.Second, func() bool {
		pid, _ := spool.ReadRunnerLock(lock)
		return pid == a.cmd.Process.Pid
	})

	b := r.start()
	standby := hook.waitFor(t, config.EventLaneStandby, "")
	if standby.Lane != "web" || !strings.Contains(standby.Holder, strconv.Itoa(a.cmd.Process.Pid)) {
		t.Errorf("lane.standby %+v: want the web lane, held by A", standby)
	}

	var b1 []e2eTask
	for i := range 9 {
		b1 = append(b1, e2eTask{ID: fmt.Sprintf("b1-%d", i), Model: "api-plain", Batch: "第一批", Content: fmt.Sprintf("[[duration=1500ms]] one %d", i)})
	}
	b1 = append(b1, e2eTask{ID: "b1-bad", Model: "api-plain", Batch: "第一批", Content: "[[status=400]] malformed"})
	r.submit(b1...)
	// Kill A while it runs a task of the batch: B reclaims it (same host,
	// dead pid) and finishes the batch.
	owner := fmt.Sprintf("e2e:%d", a.cmd.Process.Pid)
	testkit.Wait(t, "daemon A running a task of the batch", 20*time.Second, func() bool {
		for _, tk := range b1 {
			if rt := r.read(taskfile.KindAPI, taskfile.DirRunning, tk.ID); rt != nil && rt.Owner == owner {
				return true
			}
		}
		return false
	})

	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.done
	for _, tk := range b1 {
		r.final(taskfile.KindAPI, tk.ID, 60*time.Second)
	}
	fin := hook.waitFor(t, config.EventBatchFinished, "第一批")
	if fin.Counts == nil || *fin.Counts != (notify.Counts{Success: 9, Failed: 1, Total: 10}) || fmt.Sprint(fin.Failed) != "[b1-bad]" {
		t.Errorf("batch.finished %+v counts %+v", fin, fin.Counts)
	}
	failed := hook.waitFor(t, config.EventTaskFailed, "第一批")
	if failed.TaskID != "b1-bad" || failed.ErrorClass != "permanent" || !strings.Contains(failed.Error, "400") {
		t.Errorf("task.failed %+v", failed)
	}

	// B runs the web lane now: switching the account off holds it.
	if err := os.WriteFile(filepath.Join(r.L.Accounts(), "acc1.disabled"), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	held := hook.waitFor(t, config.EventAccountHeld, "")
	if held.Account != "acc1" || !strings.Contains(held.Reason, "acc1.disabled") {
		t.Errorf("account.held %+v", held)
	}

	// A starts again (a new pid) and stands by; a second batch runs on both.
	a2 := r.start()
	var b2 []e2eTask
	for i := range 4 {
		b2 = append(b2, e2eTask{ID: fmt.Sprintf("b2-%d", i), Model: "api-plain", Batch: "second", Content: fmt.Sprintf("[[duration=300ms]] two %d", i)})
	}
	r.submit(b2...)
	for _, tk := range b2 {
		r.final(taskfile.KindAPI, tk.ID, 30*time.Second)
	}
	hook.waitFor(t, config.EventBatchFinished, "second")
	// A graceful stop takes a last look and sends what is queued: after
	// it, nothing more can arrive.
	a2.stop()
	b.stop()
	for _, batch := range []string{"第一批", "second"} {
		if got := hook.received(config.EventBatchFinished, batch); len(got) != 1 {
			t.Errorf("batch %s: %d batch.finished events, want exactly 1: %+v", batch, len(got), got)
		}
	}
	if got := hook.received(config.EventTaskFailed, ""); len(got) != 1 {
		t.Errorf("%d task.failed events, want 1", len(got))
	}
	// B stood by at its start, A at its restart.
	if got := hook.received(config.EventLaneStandby, ""); len(got) != 2 || !strings.Contains(got[1].Holder, strconv.Itoa(b.cmd.Process.Pid)) {
		t.Errorf("lane.standby events %+v: want B's at its start, then A's behind B", got)
	}
	hook.mu.Lock()
	t.Logf("webhook: %d events: %v", len(hook.ok), eventNames(hook.ok))
	hook.mu.Unlock()
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
	stand := e2eAPIStand(t, apistand.Options{RequireKey: e2eKey})
	hook := e2eNewHook(t, 500, 500, 500)
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	script := filepath.Join(dir, "hang.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 3600 &\necho $$ $! \"$SPOOLGATE_EVENT\" \"$SPOOLGATE_TASK\" >> \""+pids+"\"\nwait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tail := e2eAPIModels(stand.URL()) + `notify:
  webhook: ` + strconv.Quote(hook.url) + `
  command: [` + strconv.Quote(script) + `]
  timeout: 8s
  retries: 3
  retryBackoff: 50ms
  events: [task.failed]
`
	r := newRig(t, rigOpts{Tail: tail}, "E2E_API_KEY="+e2eKey)
	d := r.start()
	r.submit(e2eTask{ID: "bad", Model: "api-plain", Content: "[[status=400]] malformed"})
	r.final(taskfile.KindAPI, "bad", 20*time.Second)
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
	var more []e2eTask
	for i := range 3 {
		more = append(more, e2eTask{ID: fmt.Sprintf("next-%d", i), Model: "api-plain", Content: "quick"})
	}
	r.submit(more...)
	for _, tk := range more {
		if got := r.final(taskfile.KindAPI, tk.ID, 20*time.Second); got.State != taskfile.StateSuccess {
			t.Errorf("%s: %s %s", tk.ID, got.State, got.Error)
		}
	}
	alive := syscall.Kill(procs[0], 0) == nil
	if !alive {
		t.Errorf("the command was gone before the lane finished 3 quick tasks: the test proves nothing (raise timeout)")
	}
	// The webhook was not held up by the command either.
	e := hook.waitFor(t, config.EventTaskFailed, "")
	hook.mu.Lock()
	posts := len(hook.posts)
	hook.mu.Unlock()
	if e.TaskID != "bad" || posts != 4 {
		t.Errorf("webhook: event %+v after %d POSTs, want bad after 4 (500, 500, 500, 200)", e, posts)
	}
	// At its timeout the command and its child are killed.
	for _, p := range procs {
		testkit.Wait(t, fmt.Sprintf("pid %d killed at the timeout", p), 30*time.Second, func() bool { return syscall.Kill(p, 0) != nil })
	}
	testkit.Wait(t, "the kill in the daemon's log", 10*time.Second, func() bool {
		return strings.Contains(d.logText(), "killed after its timeout 8s")
	})

	d.stop()
}
