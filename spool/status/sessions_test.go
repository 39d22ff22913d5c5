package status

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestSnapshot_Sessions(t *testing.T) {
	cfg := newSpool(t)
	withSites, err := config.ParseConfig([]byte(testConfig + "accounts: {ops1: {site: chat}, ops2: {site: chat}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	withSites.Spool, withSites.Web.Profiles = cfg.Spool, cfg.Web.Profiles
	cfg = withSites
	L := spool.NewLayout(cfg.Spool)
	put(t, cfg, taskfile.KindWeb, "running", taskfile.Task{TaskID: "w1", Model: "thinker", Attempt: 1, Owner: "here:1", Account: "ops1",
		StartedAt: t0.Add(-time.Minute), HeartbeatAt: t0.Add(-4 * time.Second)})
	put(t, cfg, taskfile.KindWeb, "done", taskfile.Task{TaskID: "w2", Model: "thinker", Attempt: 1, Account: "ops1",
		StartedAt: t0.Add(-3 * time.Minute), FinishedAt: t0.Add(-2 * time.Minute)})
	put(t, cfg, taskfile.KindWeb, "done", taskfile.Task{TaskID: "w3", Model: "other", Attempt: 1, Account: "ops2",
		StartedAt: t0.Add(-3 * time.Minute), FinishedAt: t0.Add(-2 * time.Minute)})
	put(t, cfg, taskfile.KindWeb, "failed", taskfile.Task{TaskID: "w4", Model: "other", Attempt: 3, Account: "ops2",
		StartedAt: t0.Add(-3 * time.Minute), FinishedAt: t0.Add(-2 * time.Minute), ErrorClass: taskfile.ClassTransient, Error: "x"})
	put(t, cfg, taskfile.KindWeb, "pending", taskfile.Task{TaskID: "w5", Model: "other"})
	put(t, cfg, taskfile.KindWeb, "pending", taskfile.Task{TaskID: "w6", Model: "other"})

	// ops2's lease is another host's.
	store := spool.NewStore(cfg, nil)
	if _, err := store.AcquireAccount("ops2", "there:9", t0.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	st, err := snapshot(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	web := st.Lanes[0]
	want := []Session{
		{Account: "ops1", Site: "chat", State: taskfile.SessionRunning, Task: "w1", HeartbeatAgeSeconds: 4, Finished: 1},
		{Account: "ops2", Site: "chat", State: taskfile.SessionLeased, Lease: "there:9", Finished: 1, Failed: 1},
	}
	if len(web.Sessions) != 2 || web.Sessions[0] != want[0] || web.Sessions[1] != want[1] {
		t.Fatalf("sessions:\n got %+v\nwant %+v", web.Sessions, want)
	}
	if web.Concurrency != 2 || *web.RunnableSessions != 2 {
		t.Errorf("web concurrency %d runnable %d, want 2 sessions", web.Concurrency, *web.RunnableSessions)
	}

	// Disabled, ops2's session idles, its pinned tasks are held, and the
	// ETA counts one session.
	if err := os.WriteFile(filepath.Join(L.Accounts(), "ops2.disabled"), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	st, err = snapshot(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	web = st.Lanes[0]
	if web.Sessions[1].State != taskfile.SessionDisabled || *web.RunnableSessions != 1 {
		t.Fatalf("after disable: %+v, runnable %d", web.Sessions[1], *web.RunnableSessions)
	}
	found := false
	for _, h := range web.Held {
		if h.Kind == HeldAccount && h.Account == "ops2" && h.Count == 2 && h.Message == "2 tasks wait: account ops2 is disabled" {
			found = true
		}
	}
	if !found {
		t.Fatalf("held: %+v", web.Held)
	}
}
