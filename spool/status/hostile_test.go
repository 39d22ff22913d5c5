package status

import (
	"os"
	"path/filepath"
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
	st, err := Snapshot(cfg, t0)
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
