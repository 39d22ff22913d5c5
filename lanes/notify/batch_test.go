package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// put writes a task file into the spool, finished at fin if final.
func put(t *testing.T, st *spool.Store, k taskfile.Kind, dir, id, batch string, fin time.Time) {
	t.Helper()
	tk := taskfile.Task{TaskID: id, ModelKind: k, Model: "m", Batch: batch, Content: "x", State: taskfile.FolderState[dir],
		SubmittedAt: fin.Add(-time.Minute), Attempt: 1}
	if tk.State.Final() {
		tk.FinishedAt = fin
	}
	if dir == taskfile.DirFailed {
		tk.ErrorClass, tk.Error = taskfile.ClassPermanent, "boom"
	}
	data, err := tk.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WriteFileAtomic(st.Layout.TaskPath(k, dir, id), data); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, st *spool.Store, k taskfile.Kind, from, id string) {
	t.Helper()
	if err := os.Remove(st.Layout.TaskPath(k, from, id)); err != nil {
		t.Fatal(err)
	}
}

func watchRig(t *testing.T, h *hook) (*spool.Store, *Notifier) {
	t.Helper()
	cfg := testConfig(t, fmt.Sprintf("notify: {webhook: %q, retryBackoff: 10ms}\n", h.URL))
	st := spool.NewStore(cfg, nil)
	if err := st.Layout.Create(); err != nil {
		t.Fatal(err)
	}
	n := New(cfg, nil)
	n.Start(context.Background())
	t.Cleanup(n.Stop)
	return st, n
}

// drain waits until no more events arrive for a while after the expected
// count, and returns them all.
func (h *hook) settle(t *testing.T, want int) []Event {
	t.Helper()
	for i := 0; i < want; i++ {
		h.wait(t, 10*time.Second)
	}
	return h.events()
}

// TestBatchWatch_ExactlyOnce: two daemons (two watches, two owners) look
// at the same completion at the same moment, several times; the webhook
// gets it once.
func TestBatchWatch_ExactlyOnce(t *testing.T) {
	h := newHook(t)
	st, n := watchRig(t, h)
	w1 := &BatchWatch{Store: st, Notifier: n, Owner: "testhost:1"}
	w2 := &BatchWatch{Store: st, Notifier: n, Owner: "otherhost:2"}
	w1.Check() // writes since: tasks must finish after it
	now := time.Now()
	put(t, st, taskfile.KindAPI, taskfile.DirDone, "a1", "launch", now.Add(time.Second))
	put(t, st, taskfile.KindWeb, taskfile.DirDone, "w1", "launch", now.Add(2*time.Second))
	put(t, st, taskfile.KindAPI, taskfile.DirFailed, "a2", "launch", now.Add(3*time.Second))
	put(t, st, taskfile.KindAPI, taskfile.DirPending, "p1", "open", now)
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		for _, w := range []*BatchWatch{w1, w2} {
			wg.Add(1)
			go func() { defer wg.Done(); w.Check() }()
		}
	}
	wg.Wait()
	got := h.settle(t, 1)
	if len(got) != 1 {
		t.Fatalf("webhook got %d events, want 1: %+v", len(got), got)
	}
	e := got[0]
	if e.Event != config.EventBatchFinished || e.Batch != "launch" || e.Counts == nil ||
		*e.Counts != (Counts{Success: 2, Failed: 1, Total: 3}) || len(e.Failed) != 1 || e.Failed[0] != "a2" {
		t.Errorf("event %+v counts %+v", e, e.Counts)
	}
	key := e.ID[len(config.EventBatchFinished)+1:]
	waitFile(t, filepath.Join(st.Layout.Root, "notify", "batches", key+".sent"))

	// More of the batch arrives and finishes: a second completion, with
	// the new counts; the open batch never finishes.
	put(t, st, taskfile.KindAPI, taskfile.DirDone, "a3", "launch", now.Add(4*time.Second))
	w2.Check()
	w1.Check()
	got = h.settle(t, 1)
	if len(got) != 2 || got[1].Counts.Total != 4 || got[1].Counts.Success != 3 || got[1].ID == e.ID {
		t.Errorf("after a late task: %+v", got)
	}
	// A retried task leaves failed/ (reopening the batch), fails again.
	remove(t, st, taskfile.KindAPI, taskfile.DirFailed, "a2") // as retry moves it to incoming/ and intake takes it
	w1.Check()
	put(t, st, taskfile.KindAPI, taskfile.DirFailed, "a2", "launch", now.Add(5*time.Second))
	w1.Check()
	w2.Check()
	got = h.settle(t, 1)
	if len(got) != 3 || got[2].Counts.Total != 4 || got[2].Counts.Failed != 1 {
		t.Errorf("after a retry: %+v", got)
	}
	for _, e := range got {
		if e.Batch == "open" {
			t.Errorf("a batch with a pending task finished: %+v", e)
		}
	}
}

// TestBatchWatch_Since: a batch that finished before notifications were
// first switched on is never announced.
func TestBatchWatch_Since(t *testing.T) {
	h := newHook(t)
	st, n := watchRig(t, h)
	put(t, st, taskfile.KindAPI, taskfile.DirDone, "old", "old-batch", time.Now().Add(-24*time.Hour))
	w := &BatchWatch{Store: st, Notifier: n}
	w.Check()
	put(t, st, taskfile.KindAPI, taskfile.DirDone, "new", "new-batch", time.Now().Add(time.Second))
	w.Check()
	got := h.settle(t, 1)
	if len(got) != 1 || got[0].Batch != "new-batch" {
		t.Errorf("got %+v, want new-batch only", got)
	}
}

// TestBatchWatch_TakeOver: a marker left unsent by a daemon of this host
// that died is sent again, once, with its original id; a marker of a live
// owner or of another host is left alone.
func TestBatchWatch_TakeOver(t *testing.T) {
	h := newHook(t)
	st, n := watchRig(t, h)
	dir := filepath.Join(st.Layout.Root, "notify", "batches")
	os.MkdirAll(dir, 0o750)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(key, owner, batch string) Event {
		e := BatchFinished(st.Cfg, &spool.BatchTally{Batch: batch, Success: 1, LastFinishedAt: time.Now()}, key, time.Now())
		data, _ := json.Marshal(markerRecord{Owner: owner, Created: time.Now(), Event: &e})
		data, _ = st.SealFor(spool.SealMarker, filepath.Join(dir, key+".json"), data) // as a daemon wrote it
		if err := os.WriteFile(filepath.Join(dir, key+".json"), data, 0o640); err != nil {
			t.Fatal(err)
		}
		return e
	}
	// Left unsent by a daemon that died before these started: its .sent
	// may have been deleted, so it is not sent again (issue 37).
	mk(batchHash("before")+"-1000", "testhost:"+strconv.Itoa(dead.Process.Pid), "before")
	// Two live daemons of this host: two live processes lend their pids.
	var owners []string
	for i := 0; i < 2; i++ {
		p := exec.Command("sleep", "60")
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Process.Kill(); p.Wait() })
		owners = append(owners, "testhost:"+strconv.Itoa(p.Process.Pid))
	}
	w1 := &BatchWatch{Store: st, Notifier: n, Owner: owners[0]}
	w2 := &BatchWatch{Store: st, Notifier: n, Owner: owners[1]}
	w1.Check()
	w2.Check()
	// Left unsent by daemons that died, or live, while these run.
	orphan := mk(batchHash("orphan")+"-1000", "testhost:"+strconv.Itoa(dead.Process.Pid), "orphan")
	mk(batchHash("live")+"-1000", "testhost:"+strconv.Itoa(os.Getpid()), "live")
	mk(batchHash("remote")+"-1000", "otherhost:1", "remote")
	var wg sync.WaitGroup
	for _, w := range []*BatchWatch{w1, w2, w1, w2} {
		wg.Add(1)
		go func() { defer wg.Done(); w.Check() }()
	}
	wg.Wait()
	got := h.settle(t, 1)
	if len(got) != 1 || got[0].ID != orphan.ID || got[0].Batch != "orphan" {
		t.Fatalf("got %+v, want the orphan's event once", got)
	}
	sent := filepath.Join(dir, batchHash("orphan")+"-1000.sent")
	waitFile(t, sent)
	w1.Check()
	w2.Check()
	if got := h.events(); len(got) != 1 {
		t.Errorf("resent after it was sent: %+v", got)
	}
	// Its .sent deleted: the daemons saw it sent, and send nothing again.
	if err := os.Remove(sent); err != nil {
		t.Fatal(err)
	}
	w1.Check()
	w2.Check()
	if got := h.events(); len(got) != 1 {
		t.Errorf("resent after its .sent was deleted: %+v", got)
	}
}

// waitFile waits for p to appear, woken by its folder's events.
func waitFile(t *testing.T, p string) {
	t.Helper()
	testkit.WaitFS(t, p+" to appear", 10*time.Second, []string{filepath.Dir(p)}, func() bool {
		_, err := os.Stat(p)
		return err == nil
	})
}

// TestBatchWatch_Forged: files a colleague plants in notify/ must not
// make the daemon act (send an event it did not make) or silence one: a
// marker naming a dead owner of this host with a fabricated event, a
// marker far in the future, a since in the future. None is deleted, and
// each is listed as foreign.
func TestBatchWatch_Forged(t *testing.T) {
	h := newHook(t)
	st, n := watchRig(t, h)
	nd := filepath.Join(st.Layout.Root, "notify")
	dir := filepath.Join(nd, "batches")
	os.MkdirAll(dir, 0o750)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	fake := BatchFinished(st.Cfg, &spool.BatchTally{Batch: "never-existed", Success: 40, LastFinishedAt: time.Now()}, "x", time.Now())
	data, _ := json.Marshal(markerRecord{Owner: "testhost:" + strconv.Itoa(dead.Process.Pid), Created: time.Now(), Event: &fake})
	planted := map[string][]byte{
		filepath.Join(dir, batchHash("never-existed")+"-1000.json"):       data,
		filepath.Join(dir, batchHash("real")+"-9223372036854775807.json"): data,
		filepath.Join(nd, "since"):                                        []byte("2099-01-01T00:00:00Z\n"),
		filepath.Join(dir, batchHash("never-existed")+"-1000.take.1"):     data,
	}
	for p, d := range planted {
		if err := os.WriteFile(p, d, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	put(t, st, taskfile.KindAPI, taskfile.DirDone, "r1", "real", time.Now().Add(time.Second))
	w := &BatchWatch{Store: st, Notifier: n}
	w.Check()
	w.Check()
	got := h.settle(t, 1)
	if len(got) != 1 || got[0].Batch != "real" {
		t.Fatalf("got %+v, want the real batch's event only", got)
	}
	for p := range planted {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("planted %s was removed: %v", p, err)
		}
	}
	if f := st.CheckForeign(); len(f) != len(planted) {
		t.Errorf("foreign files listed %+v, want the %d planted", f, len(planted))
	}
}
