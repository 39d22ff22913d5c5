package status

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestSnapshot_Hostile: what a colleague's files may not do to the view.
func TestSnapshot_Hostile(t *testing.T) {
	cfg := newSpool(t)
	L := spool.NewLayout(cfg.Spool)
	// A running file dated 2099: its ETA is clamped to the lane's typical
	// duration (was 631,886 h), its elapsed time never negative.
	future := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	put(t, cfg, taskfile.KindAPI, "running", taskfile.Task{TaskID: "r2099", Model: "writer", Attempt: 1, Owner: "x:1", StartedAt: future, HeartbeatAt: future})
	// A host name made to be pasted into a shell.
	os.WriteFile(filepath.Join(L.Lane(taskfile.KindAPI, ""), "paused.x;$(id)"), nil, 0o640)
	st, err := snapshot(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	api := st.Lanes[1]
	if api.ETA.Seconds == nil || *api.ETA.Seconds > DefaultAPIDuration.Seconds() {
		t.Errorf("ETA %v, want at most the typical %v", api.ETA.Seconds, DefaultAPIDuration)
	}
	for _, r := range api.Running {
		if r.ElapsedSeconds < 0 {
			t.Errorf("elapsed %v", r.ElapsedSeconds)
		}
	}
	found := false
	for _, h := range api.Held {
		if h.Host == "x;$(id)" {
			found = true
			if !strings.Contains(h.Message, `--host 'x;$(id)')`) {
				t.Errorf("suggested command not quoted: %s", h.Message)
			}
		}
	}
	if !found {
		t.Errorf("paused host not shown: %+v", api.Held)
	}
}

// TestSnapshot_ForeignHolds: hold files of accounts the config does not
// know, and forged holds of one it knows, hold nothing and do not swell
// the view: no account held, at most ListCap foreign files named and the
// rest counted (was one held account, and two /metrics series, per file).
func TestSnapshot_ForeignHolds(t *testing.T) {
	cfg := newSpool(t)
	L := spool.NewLayout(cfg.Spool)
	os.MkdirAll(L.Accounts(), 0o750)
	for i := range 1000 {
		os.WriteFile(filepath.Join(L.Accounts(), "stranger"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+strconv.Itoa(i)+taskfile.HeldExt),
			[]byte("until: 2099-01-01T00:00:00Z\nreason: forged\nsince: 2026-01-01T00:00:00Z\n"), 0o640)
	}
	st, err := snapshot(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Accounts) != 0 {
		t.Errorf("%d accounts held by forged files", len(st.Accounts))
	}
	if len(st.Foreign) != ListCap || st.ForeignMore != 1000-ListCap {
		t.Errorf("foreign %d listed + %d more, want %d + %d", len(st.Foreign), st.ForeignMore, ListCap, 1000-ListCap)
	}
}
