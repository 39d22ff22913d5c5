//go:build unix

package lanes

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestDaemon_HostileRequests: entries of cancel/ and priority/ that are
// not plain files named after a taskId are ignored (never acted on, never
// removed) and logged once however many rescans see them (was two ERROR
// lines per entry at every rescan, for ever).
func TestDaemon_HostileRequests(t *testing.T) {
	cfg, err := config.ParseConfig([]byte("spool: " + filepath.Join(t.TempDir(), "spool") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	var buf testkit.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	st := spool.NewStore(cfg, log)
	if err := st.Layout.Create(); err != nil {
		t.Fatal(err)
	}
	d := &Daemon{Store: st, Log: log, cfg: cfg}
	cancelDir := st.Layout.Lane(taskfile.KindAPI, taskfile.DirCancel)
	prioDir := st.Layout.Lane(taskfile.KindAPI, taskfile.DirPriority)
	os.MkdirAll(filepath.Join(cancelDir, "full", "x"), 0o750)
	os.MkdirAll(filepath.Join(prioDir, "full", "x"), 0o750)
	syscall.Mkfifo(filepath.Join(cancelDir, "fifo"), 0o600)
	os.Symlink("/etc/passwd", filepath.Join(prioDir, "link"))
	entries := []struct {
		w    spool.WatchDir
		name string
	}{
		{spool.WatchDir{Path: cancelDir, Lane: taskfile.KindAPI, CancelRequests: true}, "full"},
		{spool.WatchDir{Path: cancelDir, Lane: taskfile.KindAPI, CancelRequests: true}, "fifo"},
		{spool.WatchDir{Path: cancelDir, Lane: taskfile.KindAPI, CancelRequests: true}, ".."},
		{spool.WatchDir{Path: prioDir, Lane: taskfile.KindAPI, PriorityRequests: true}, "full"},
		{spool.WatchDir{Path: prioDir, Lane: taskfile.KindAPI, PriorityRequests: true}, "link"},
	}
	for range 100 { // a hundred rescans
		for _, e := range entries {
			d.handle(e.w, e.name)
		}
	}
	out := buf.String()
	if n := strings.Count(out, "\n"); n != len(entries) {
		t.Errorf("%d log lines over 100 rescans of %d hostile entries, want one each:\n%s", n, len(entries), out)
	}
	if strings.Contains(out, "level=ERROR") {
		t.Errorf("an ERROR line for an ignored entry:\n%s", out)
	}
	for _, p := range []string{filepath.Join(cancelDir, "full", "x"), filepath.Join(prioDir, "full", "x"), filepath.Join(cancelDir, "fifo"), filepath.Join(prioDir, "link")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}
