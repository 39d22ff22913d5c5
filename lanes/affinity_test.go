package lanes_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestLane_ReattachWait: a task whose prompt went into a conversation of
// account a1 waits for a1's session (here switched off) for
// web.reattachWait before a2 may send it again; a task never sent goes to
// a2 at once.
func TestLane_ReattachWait(t *testing.T) {
	cfg := sessionConfig(t, []string{"a1", "a2"}, "  - {name: chat, kind: web, site: standin}")
	const wait = 1500 * time.Millisecond
	cfg.Web.ReattachWait = config.Duration(wait)
	if err := os.MkdirAll(filepath.Join(cfg.Spool, "accounts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.Spool, "accounts", "a1.disabled"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A task cut off after its send on a1 (as a reclaim leaves it), put
	// in pending/ before the daemon starts.
	sent := time.Now().UTC()
	pend := filepath.Join(cfg.Spool, "web", "pending")
	if err := os.MkdirAll(pend, 0o755); err != nil {
		t.Fatal(err)
	}
	tk := &taskfile.Task{TaskID: "sent1", ModelKind: taskfile.KindWeb, Model: "chat", Content: "[[duration=10ms]] once",
		State: taskfile.StatePending, Attempt: 1, SubmittedAt: sent.Add(-time.Second), HeartbeatAt: sent,
		Send: &taskfile.SendRecord{State: taskfile.SendSent, Attempt: 1, Account: "a1", SendingAt: sent, SentAt: sent, Conversation: "http://127.0.0.1:9/c/x"}}
	data, err := spool.NewStore(cfg, nil).EncodeTask(taskfile.KindWeb, tk) // as the daemon that sent it wrote it
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pend, "sent1.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := start(t, cfg)
	drop(t, cfg, taskfile.KindWeb, "fresh", "chat", "[[duration=10ms]] new")
	if dir, got := waitFinal(t, r, taskfile.KindWeb, "fresh", 10*time.Second); dir != taskfile.DirDone || got.Account != "a2" {
		t.Fatalf("fresh: %s on %q, want done on a2", dir, got.Account)
	}
	dir, got := waitFinal(t, r, taskfile.KindWeb, "sent1", 10*time.Second)
	if dir != taskfile.DirDone || got.Account != "a2" {
		t.Fatalf("sent1: %s on %q, want done on a2 once reattachWait passed", dir, got.Account)
	}
	if early := sent.Add(wait).Sub(got.StartedAt); early > 0 {
		t.Fatalf("sent1 started on a2 %s before web.reattachWait (%s) had passed since its send on a1", early, wait)
	}
	if ran := r.web.RanOn("sent1"); strings.Join(ran, ",") != "a2" {
		t.Fatalf("sent1 ran on %v, want a2 once", ran)
	}
}
