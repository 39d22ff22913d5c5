package status

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Each pending task says why it waits: an account disabled, held by a
// usage limit (until when), paced (by which rule), a retry's back-off, an
// API model's 429, the lane paused; one that waits only for the tasks
// ahead has its place and ETA and no wait.
func TestStatus_QueueOf(t *testing.T) {
	cfg := newSpool(t)
	withSites, err := config.ParseConfig([]byte(strings.Replace(testConfig, "sites:",
		"  - {name: third, kind: web, site: chat, account: ops3}\nsites:", 1) + "accounts: {ops1: {site: chat}, ops2: {site: chat}, ops3: {site: chat}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	withSites.Spool, withSites.Web.Profiles = cfg.Spool, cfg.Web.Profiles
	cfg = withSites
	L := spool.NewLayout(cfg.Spool)
	store := spool.NewStore(cfg, nil)
	web, api := taskfile.KindWeb, taskfile.KindAPI
	put(t, cfg, web, "pending", taskfile.Task{TaskID: "on-disabled", Model: "other"})
	put(t, cfg, web, "pending", taskfile.Task{TaskID: "on-limit", Model: "thinker"})
	put(t, cfg, web, "pending", taskfile.Task{TaskID: "on-paced", Model: "third"})
	put(t, cfg, api, "pending", taskfile.Task{TaskID: "backoff", Model: "writer", Attempt: 1, NotBefore: t0.Add(5 * time.Minute)})
	put(t, cfg, api, "pending", taskfile.Task{TaskID: "quota", Model: "cheap", SubmittedAt: t0.Add(-2 * time.Hour)})
	put(t, cfg, api, "pending", taskfile.Task{TaskID: "plain", Model: "writer", SubmittedAt: t0.Add(-90 * time.Minute)})
	put(t, cfg, api, "running", taskfile.Task{TaskID: "runs", Model: "writer", Attempt: 1, StartedAt: t0.Add(-time.Second)})

	if err := os.WriteFile(L.Accounts()+"/ops2.disabled", nil, 0o640); err != nil {
		t.Fatal(err)
	}
	limit := t0.Add(time.Hour)
	if err := store.HoldAccount(taskfile.Hold{Account: "ops1", Until: limit, Reason: "You've reached the limit", Since: t0}); err != nil {
		t.Fatal(err)
	}
	paced := t0.Add(2 * time.Minute)
	if err := store.MarkPaced("ops3", paced, "minGap 5m"); err != nil {
		t.Fatal(err)
	}
	quota := t0.Add(30 * time.Second)
	live := func() []taskfile.LaneInfo {
		return []taskfile.LaneInfo{{Kind: api, Concurrency: 2, Quota: map[string]time.Time{"cheap": quota}}}
	}
	st, err := NewSnapshotter(store, live).Snapshot(t0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		lane, id string
		want     *Wait
		place    int
	}{
		{"web", "on-disabled", &Wait{Kind: HeldAccount, Account: "ops2", Hold: HoldDisabled}, 0},
		{"web", "on-limit", &Wait{Kind: HeldAccount, Account: "ops1", Hold: HoldLimit, Reason: "You've reached the limit", Until: &limit}, 0},
		{"web", "on-paced", &Wait{Kind: HeldPaced, Account: "ops3", Reason: "minGap 5m", Until: &paced}, 1},
		{"api", "quota", &Wait{Kind: HeldQuota, Model: "cheap", Until: &quota}, 1},
		{"api", "plain", nil, 2},
		{"api", "backoff", &Wait{Kind: HeldDeferred, Until: ptr(t0.Add(5 * time.Minute))}, 3},
		{"api", "runs", nil, 0},
	}
	for _, tc := range tests {
		q := st.QueueOf(tc.lane, tc.id)
		if !sameWait(q.Wait, tc.want) || q.Place != tc.place {
			t.Errorf("%s/%s: place %d wait %+v, want place %d wait %+v", tc.lane, tc.id, q.Place, q.Wait, tc.place, tc.want)
		}
		if tc.lane == "api" && q.ETA.IsZero() {
			t.Errorf("%s/%s: no ETA", tc.lane, tc.id)
		}
	}

	// The lane paused: every task that has no wait of its own waits for it,
	// and has a place but no ETA.
	if err := os.WriteFile(L.Paused(api), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	st, err = NewSnapshotter(store, live).Snapshot(t0)
	if err != nil {
		t.Fatal(err)
	}
	if q := st.QueueOf("api", "plain"); !sameWait(q.Wait, &Wait{Kind: HeldPaused}) || q.Place != 2 || !q.ETA.IsZero() || q.Of != 3 {
		t.Errorf("paused lane: %+v", q)
	}
}

func sameWait(a, b *Wait) bool {
	if a == nil || b == nil {
		return a == b
	}
	if (a.Until == nil) != (b.Until == nil) || a.Until != nil && !a.Until.Equal(*b.Until) {
		return false
	}
	x, y := *a, *b
	x.Until, y.Until = nil, nil
	return x == y
}

// TestSnapshot_Overdue: a lane whose only task runs longer than the
// typical duration is due now, never done; its batch too.
func TestSnapshot_Overdue(t *testing.T) {
	cfg := newSpool(t)
	put(t, cfg, taskfile.KindAPI, "done", done("d1", "b", t0.Add(-time.Hour), 10*time.Second))
	put(t, cfg, taskfile.KindAPI, "running", taskfile.Task{TaskID: "r1", Model: "writer", Batch: "b", Attempt: 1, StartedAt: t0.Add(-time.Minute)})
	st, err := snapshot(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	api := st.Lanes[1]
	if api.ETA.Seconds == nil || *api.ETA.Seconds != 0 || api.ETA.Note != OverdueNote {
		t.Errorf("lane ETA %+v, want 0 s and %q", api.ETA, OverdueNote)
	}
	if b := st.Batches[0]; b.ETA.Seconds == nil || *b.ETA.Seconds != 0 || b.ETA.Note != OverdueNote {
		t.Errorf("batch ETA %+v, want 0 s and %q", b.ETA, OverdueNote)
	}
}
