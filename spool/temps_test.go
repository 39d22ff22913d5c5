//go:build unix

package spool

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestStore_CleanTemps(t *testing.T) {
	s, logs := newLoggedStore(t)
	dead := testkit.DeadPid(t)
	old := time.Now().Add(-2 * s.Cfg.StaleAfter.D())
	plant := func(dir, name string, mtime time.Time) string {
		t.Helper()
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o640); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, mtime, mtime)
		return p
	}
	ours := fsx.TempFileName(fsx.HostTag(s.Cfg.Host), dead, 1)
	gone := []string{
		plant(s.Layout.Lane(taskfile.KindAPI, taskfile.DirRunning), ours, time.Now()),
		plant(s.Layout.Lane(taskfile.KindWeb, taskfile.DirPending), ours, time.Now()),
		plant(s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming), ours, time.Now()),
		plant(s.Layout.Incoming(), ours, time.Now()),
		plant(filepath.Join(s.Layout.Output(), "a", "b"), ours, time.Now()),
		plant(filepath.Join(s.Layout.Root, "api"), ours, time.Now()),
		plant(filepath.Join(s.Layout.Root, "notify", "batches"), ours, time.Now()),
		plant(s.Layout.Lane(taskfile.KindAPI, taskfile.DirCancel), fsx.TempFileName(fsx.HostTag("elsewhere"), 1, 2), old),
	}
	kept := []string{
		plant(s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming), "job.yaml.tmp", old),
		plant(s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming), ".job.yaml.part", old),
		plant(s.Layout.Incoming(), ".sg-a.yaml.1.2.tmp", old),
		plant(s.Layout.Lane(taskfile.KindAPI, taskfile.DirFailed), fsx.TempFileName(fsx.HostTag("elsewhere"), 1, 2), time.Now()),
		plant(s.Layout.Lane(taskfile.KindAPI, taskfile.DirDone), "x.yaml", old),
	}
	if n := s.CleanTemps(); n != len(gone) {
		t.Errorf("removed %d, want %d\n%s", n, len(gone), logs)
	}
	for _, p := range gone {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("left: %s", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("removed: %s", p)
		}
	}
}
