package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// hook is a webhook receiver on 127.0.0.1 that answers with the statuses
// given, in turn (200 once they run out), and records every body.
type hook struct {
	*httptest.Server
	mu       sync.Mutex
	statuses []int
	got      []Event
	tries    int
	arrived  chan Event // each event answered 2xx
}

func newHook(t *testing.T, statuses ...int) *hook {
	t.Helper()
	h := &hook{statuses: statuses, arrived: make(chan Event, 100)}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var e Event
		if err := json.Unmarshal(body, &e); err != nil || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("webhook got %q (%v), content type %q", body, err, r.Header.Get("Content-Type"))
		}
		h.mu.Lock()
		h.tries++
		code := http.StatusOK
		if len(h.statuses) > 0 {
			code, h.statuses = h.statuses[0], h.statuses[1:]
		}
		if code/100 == 2 {
			h.got = append(h.got, e)
		}
		h.mu.Unlock()
		w.WriteHeader(code)
		if code/100 == 2 {
			h.arrived <- e
		}
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hook) events() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Event(nil), h.got...)
}

func (h *hook) wait(t *testing.T, within time.Duration) Event {
	t.Helper()
	select {
	case e := <-h.arrived:
		return e
	case <-time.After(within):
		t.Fatalf("no event reached the webhook within %s", within)
		return Event{}
	}
}

func testConfig(t *testing.T, notify string) *config.Config {
	t.Helper()
	cfg, err := config.ParseConfig([]byte("host: testhost\n" + notify))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Spool = filepath.Join(t.TempDir(), "spool")
	return cfg
}

func TestNotifier_WebhookRetried(t *testing.T) {
	h := newHook(t, 500, 500, 500, 200)
	cfg := testConfig(t, fmt.Sprintf("notify: {webhook: %q, retryBackoff: 10ms, retries: 5, headers: {X-Token: abc}}\n", h.URL))
	n := New(cfg, nil)
	n.Start(context.Background())
	defer n.Stop()
	done := make(chan error, 1)
	e := TaskFailed(cfg, taskfile.KindAPI, &taskfile.Task{TaskID: "t1", Batch: "b", Model: "m", Attempt: 3, ErrorClass: taskfile.ClassPermanent, Error: "HTTP 400"})
	n.NotifyThen(e, func(err error) { done <- err })
	got := h.wait(t, 10*time.Second)
	if err := <-done; err != nil {
		t.Fatalf("done: %v", err)
	}
	if got.ID != e.ID || got.Event != config.EventTaskFailed || got.TaskID != "t1" || got.ErrorClass != "permanent" || got.Host != "testhost" || got.Version != 1 {
		t.Errorf("webhook got %+v", got)
	}
	h.mu.Lock()
	tries := h.tries
	h.mu.Unlock()
	if tries != 4 {
		t.Errorf("webhook saw %d tries, want 4 (500, 500, 500, 200)", tries)
	}
	if st := n.Stats(); st.Delivered != 1 || st.Failed != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestNotifier_WebhookGivesUp(t *testing.T) {
	h := newHook(t, 500, 500, 500, 500)
	cfg := testConfig(t, fmt.Sprintf("notify: {webhook: %q, retryBackoff: 5ms, retries: 2}\n", h.URL))
	n := New(cfg, nil)
	n.Start(context.Background())
	defer n.Stop()
	done := make(chan error, 1)
	n.NotifyThen(LaneStandby(cfg, taskfile.KindWeb, "pid 1 on x"), func(err error) { done <- err })
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "500") {
			t.Errorf("done: %v, want the 500", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("never gave up")
	}
	if st := n.Stats(); st.Failed != 1 || st.Delivered != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestNotifier_Command checks what the command gets: the JSON on stdin,
// the names in its environment.
func TestNotifier_Command(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	script := filepath.Join(dir, "on-event.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n{ echo \"$SPOOLGATE_EVENT|$SPOOLGATE_BATCH|$SPOOLGATE_TASK|$SPOOLGATE_EVENT_ID\"; cat; } > \""+out+".tmp\" && mv \""+out+".tmp\" \""+out+"\"\n"), 0o755)
	cfg := testConfig(t, fmt.Sprintf("notify: {command: [%q], retryBackoff: 10ms}\n", script))
	n := New(cfg, nil)
	n.Start(context.Background())
	done := make(chan error, 1)
	e := TaskFailed(cfg, taskfile.KindWeb, &taskfile.Task{TaskID: "t9", Batch: "批次", Model: "m", Error: "boom"})
	n.NotifyThen(e, func(err error) { done <- err })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	n.Stop()
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := strings.Cut(string(data), "\n")
	if head != "task.failed|批次|t9|"+e.ID {
		t.Errorf("environment %q", head)
	}
	var got Event
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.ID != e.ID || got.Error != "boom" || got.Lane != "web" {
		t.Errorf("stdin %q: %v", body, err)
	}
}

// TestNotifier_HangingCommand: a command that hangs, with a child of its
// own, is killed with its process group at the timeout, and Notify never
// waits for it.
func TestNotifier_HangingCommand(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	script := filepath.Join(dir, "hang.sh")
	os.WriteFile(script, []byte("#!/bin/sh\nsleep 300 &\necho $$ $! >> \""+pids+"\"\nwait\n"), 0o755)
	cfg := testConfig(t, fmt.Sprintf("notify: {command: [%q], timeout: 300ms, retries: 0}\n", script))
	n := New(cfg, nil)
	n.Start(context.Background())
	defer n.Stop()
	done := make(chan error, 3)
	for i := 0; i < 3; i++ {
		n.NotifyThen(LaneStandby(cfg, taskfile.KindWeb, "x"), func(err error) { done <- err })
	}
	for i := 0; i < 3; i++ {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "killed after its timeout") {
				t.Errorf("event %d: %v, want killed at timeout", i, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("hanging command not killed")
		}
	}
	data, _ := os.ReadFile(pids)
	lines := strings.Fields(string(data))
	// A run the timeout killed before its shell wrote its line (a loaded
	// machine) left nothing behind to kill; every run that did must be
	// gone, sh and sleep both, and at least one must have.
	if len(lines) == 0 || len(lines)%2 != 0 || len(lines) > 6 {
		t.Fatalf("pid file %q: want 1 to 3 runs of sh and sleep", data)
	}
	for _, p := range lines {
		var pid int
		fmt.Sscan(p, &pid)
		if !testkit.Until(5*time.Second, func() bool { return syscall.Kill(pid, 0) != nil }) {
			t.Errorf("pid %d (the command or its child) still alive after the timeout", pid)
		}
	}
}

// TestNotifier_NeverBlocks: with a command that hangs for an hour, Notify
// still returns at once (were it to wait, this test would hang), and Stop
// kills the command after its short grace.
func TestNotifier_NeverBlocks(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "hang.sh")
	started := filepath.Join(dir, "started")
	os.WriteFile(script, []byte("#!/bin/sh\ntouch \""+started+"\"\nexec sleep 3600\n"), 0o755)
	cfg := testConfig(t, fmt.Sprintf("notify: {command: [%q], timeout: 1h}\n", script))
	n := New(cfg, nil)
	n.Start(context.Background())
	for i := 0; i < 5; i++ {
		n.Notify(LaneStandby(cfg, taskfile.KindWeb, "x"))
	}
	testkit.Wait(t, "the command to start", 10*time.Second, func() bool {
		_, err := os.Stat(started)
		return err == nil
	})
	n.Stop()
	if st := n.Stats(); st.Delivered != 0 || st.Failed != 0 || st.Dropped != 5 {
		t.Errorf("stats %+v: want the hanging run cut short and the queued ones not tried, all 5 dropped", st)
	}
}

func TestNotifier_QueueFullAndStop(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	cfg := testConfig(t, fmt.Sprintf("notify: {webhook: %q, timeout: 1s, retries: 0, events: [task.failed]}\n", srv.URL))
	n := New(cfg, nil)
	n.Start(context.Background())
	n.Notify(LaneStandby(cfg, taskfile.KindWeb, "x")) // not wanted: never queued
	for i := 0; i < QueueSize+10; i++ {
		n.Notify(TaskFailed(cfg, taskfile.KindAPI, &taskfile.Task{TaskID: fmt.Sprint(i)}))
	}
	if st := n.Stats(); st.Dropped < 9 {
		t.Errorf("dropped %d, want the overflow dropped", st.Dropped)
	}
	n.Stop()
	n.Stop()
	n.Notify(TaskFailed(cfg, taskfile.KindAPI, &taskfile.Task{TaskID: "late"}))
	var nilN *Notifier
	nilN.Start(context.Background())
	nilN.Notify(Event{})
	nilN.Stop()
	if New(testConfig(t, ""), nil) != nil {
		t.Error("a notifier without receivers")
	}
}

func TestNotifier_Send(t *testing.T) {
	h := newHook(t, 503)
	cfg := testConfig(t, fmt.Sprintf("notify: {webhook: %q}\n", h.URL))
	n := New(cfg, nil)
	var rep []string
	err := n.Send(context.Background(), Sample(cfg, config.EventBatchFinished), func(r string, err error) { rep = append(rep, fmt.Sprint(r, " ", err)) })
	if err == nil || !strings.Contains(err.Error(), "503") || len(rep) != 1 {
		t.Errorf("first send: %v %v", err, rep)
	}
	if err := n.Send(context.Background(), Sample(cfg, config.EventBatchFinished), nil); err != nil {
		t.Fatal(err)
	}
	got := h.events()
	if len(got) != 1 || !got[0].Test || got[0].Event != config.EventBatchFinished || got[0].Counts == nil || got[0].Counts.Total != 40 {
		t.Errorf("sample %+v", got)
	}
	for _, name := range config.Events {
		if e := Sample(cfg, name); e.Event != name || !e.Test || e.ID == "" {
			t.Errorf("sample of %s: %+v", name, e)
		}
	}
}
