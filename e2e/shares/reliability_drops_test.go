// The reliability suite drives POSIX signals, mounts and fifos.

//go:build unix

package shares

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// snapshot lists a folder tree with sizes and modes, to compare.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, _ := e.Info()
		fmt.Fprintf(&b, "%s %v %d; ", strings.TrimPrefix(p, dir), fi.Mode(), fi.Size())
		return nil
	})
	return b.String()
}

// TestReliability_TenThousandDrops drops 10,000 files at once (renamed
// into place one after another as fast as the test can) and times intake
// until every one is pending. The API lane is paused, so the figure is
// intake alone. `make test` drops 500: the same burst (each rename as fast
// as the test can, the daemon already watching), every one taken, nothing
// left behind; `make soak` gives the figure at 10,000. Neither 500
// nor the 2,000 of before comes near the watcher's queue limit (16,384
// events), so 500 proves what 2,000 did, at a quarter of the CI time (the
// race detector makes each intake's durable writes several times slower).
func TestReliability_TenThousandDrops(t *testing.T) {
	t.Parallel()
	n := 500
	if testkit.Reliability() {
		n = 10000
	}
	r := rig.New(t, rig.Opts{Fake: true})
	l := spool.NewLayout(r.Spool)
	if err := l.Create(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.Paused(taskfile.KindAPI), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	in := l.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	for i := range n {
		if err := os.WriteFile(filepath.Join(in, fmt.Sprintf(".t%05d.part", i)), taskYAML(fmt.Sprintf("t%05d", i), "fast", "many"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := r.StartHost(rig.DaemonOpts{Name: "tenk"})
	d.WaitReady()
	begin := time.Now()
	for i := range n {
		if err := os.Rename(filepath.Join(in, fmt.Sprintf(".t%05d.part", i)), filepath.Join(in, fmt.Sprintf("t%05d.yaml", i))); err != nil {
			t.Fatal(err)
		}
	}
	dropped := time.Since(begin)
	pending := l.Lane(taskfile.KindAPI, taskfile.DirPending)
	testkit.Wait(t, fmt.Sprintf("all %d pending", n), 4*time.Minute, func() bool {
		d.MustBeAlive()
		f, err := os.Open(pending)
		if err != nil {
			return false
		}
		defer f.Close()
		names, _ := f.Readdirnames(-1)
		return len(names) >= n
	})

	took := time.Since(begin)
	d.Stop()
	ents, _ := os.ReadDir(in)
	failed, _ := os.ReadDir(l.Lane(taskfile.KindAPI, taskfile.DirFailed))
	if len(ents) != 0 || len(failed) != 0 {
		t.Errorf("after intake: %d left in incoming/, %d in failed/", len(ents), len(failed))
	}
	t.Logf("reliability: %d drops: renamed into place in %s, all accepted (pending) after %s: %.0f drops/s",
		n, dropped.Round(time.Millisecond), took.Round(time.Millisecond), float64(n)/took.Seconds())
}

// TestReliability_Permissions: what spoolgate creates is 0750 (folders) and
// 0640 (task files, logs, .error); the web lane's profiles folder is 0700;
// the HTTP status port binds to loopback unless configured otherwise.
func TestReliability_Permissions(t *testing.T) {
	old := syscall.Umask(0) // the daemon inherits it: its own modes must hold
	defer syscall.Umask(old)
	r := rig.New(t, rig.Opts{Fake: true})
	d := r.StartHost(rig.DaemonOpts{Name: "perm"})
	syscall.Umask(old)
	d.WaitReady()
	l := spool.NewLayout(r.Spool)
	dropFile(t, l.Lane(taskfile.KindAPI, taskfile.DirIncoming), "ok.yaml", taskYAML("ok", "fast", "fine", "output: sub/ok.txt"))
	dropFile(t, l.Lane(taskfile.KindWeb, taskfile.DirIncoming), "w.yaml", taskYAML("w", "chat", "web"))
	dropFile(t, l.Lane(taskfile.KindAPI, taskfile.DirIncoming), "bad.yaml", []byte("model: nope\ncontent: x\n"))
	testkit.Wait(t, "tasks final and the bad drop rejected", 20*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(l.Lane(taskfile.KindAPI, taskfile.DirFailed), "bad.error"))
		return err == nil && l.Locate(taskfile.KindAPI, "ok") == taskfile.DirDone && l.Locate(taskfile.KindWeb, "w") == taskfile.DirDone
	})

	d.Stop()
	checked := 0
	filepath.WalkDir(r.Spool, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, _ := e.Info()
		want := os.FileMode(0o640)
		if e.IsDir() {
			want = 0o750
		}
		if strings.HasSuffix(p, "/failed/bad.yaml") {
			return nil // a rejected drop keeps the mode its submitter gave it
		}
		checked++
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
		return nil
	})
	prof := filepath.Join(r.Dir, "profiles")
	if fi, err := os.Stat(prof); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("profiles folder %s: %v %v, want 0700", prof, fi, err)
	}
	if _, err := os.Stat(config.RunnerLockPath(prof)); err != nil {
		t.Errorf("web lock: %v", err)
	}
	cfg, err := config.ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	host, _, err := net.SplitHostPort(cfg.HTTP)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		t.Errorf("default http %q does not bind to loopback", cfg.HTTP)
	}
	t.Logf("reliability: permissions: %d paths checked (folders 0750, files 0640, umask 0), profiles 0700, default http %s", checked, cfg.HTTP)
}
