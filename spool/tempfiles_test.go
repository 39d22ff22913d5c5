//go:build unix

package spool

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// deadPid returns the pid of a process that has ended (and was reaped).
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` to run:", err)
	}
	return cmd.Process.Pid
}

func TestTempName_Short(t *testing.T) {
	long := filepath.Join("/x", strings.Repeat("春", taskfile.MaxTaskIDBytes/3)+".yaml")
	name := filepath.Base(tempName(long, hostTag("a-rather-long-host-name.example.internal")))
	if !IsOwnTemp(name) || len(name) > 41 {
		t.Errorf("temp name %q (%d bytes): want an own temp of at most 41 bytes", name, len(name))
	}
	ti, ok := parseTemp(name)
	if !ok || ti.pid != os.Getpid() || ti.tag != hostTag("a-rather-long-host-name.example.internal") {
		t.Errorf("parseTemp(%q) = %+v %v", name, ti, ok)
	}
}

func TestTempLeftover(t *testing.T) {
	now := time.Now()
	stale := 90 * time.Second
	old, young := now.Add(-2*stale), now.Add(-time.Second)
	dead := deadPid(t)
	me := os.Getpid()
	alive := os.Getppid()
	mine := func(pid int) string { return TempFileName(hostTag("h1"), pid, 7) }
	other := TempFileName(hostTag("h2"), alive, 7)
	tests := []struct {
		name    string
		file    string
		mtime   time.Time
		dropBox bool
		remove  bool
	}{
		{"this host, process gone", mine(dead), young, false, true},
		{"this host, process gone, drop box", mine(dead), young, true, true},
		{"this host, process alive", mine(alive), old, false, false},
		{"this process, young", mine(me), young, false, false},
		{"this process's pid, old (an earlier life)", mine(me), old, false, true},
		{"other host, young", other, young, false, false},
		{"other host, old", other, old, false, true},
		{"older format, old", ".sg-a.yaml.123.4.tmp", old, false, true},
		{"older format, young", ".sg-a.yaml.123.4.tmp", young, false, false},
		{"older format in a drop box", ".sg-a.yaml.123.4.tmp", old, true, false},
		{"a user's temp file", "report.yaml.tmp", old, true, false},
		{"a user's .sg- file", ".sg-notes.tmp", old, true, false},
		{"not a temp", "a.yaml", old, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tempLeftover(tt.file, hostTag("h1"), tt.mtime, now, stale, tt.dropBox) != ""
			if got != tt.remove {
				t.Errorf("tempLeftover(%s) = %v, want %v", tt.file, got, tt.remove)
			}
		})
	}
}

func TestStore_CleanTemps(t *testing.T) {
	s, logs := newLoggedStore(t)
	dead := deadPid(t)
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
	ours := TempFileName(hostTag(s.Cfg.Host), dead, 1)
	gone := []string{
		plant(s.Layout.Lane(taskfile.KindAPI, taskfile.DirRunning), ours, time.Now()),
		plant(s.Layout.Lane(taskfile.KindWeb, taskfile.DirPending), ours, time.Now()),
		plant(s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming), ours, time.Now()),
		plant(s.Layout.Incoming(), ours, time.Now()),
		plant(filepath.Join(s.Layout.Output(), "a", "b"), ours, time.Now()),
		plant(filepath.Join(s.Layout.Root, "api"), ours, time.Now()),
		plant(filepath.Join(s.Layout.Root, "notify", "batches"), ours, time.Now()),
		plant(s.Layout.Lane(taskfile.KindAPI, taskfile.DirCancel), TempFileName(hostTag("elsewhere"), 1, 2), old),
	}
	kept := []string{
		plant(s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming), "job.yaml.tmp", old),
		plant(s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming), ".job.yaml.part", old),
		plant(s.Layout.Incoming(), ".sg-a.yaml.1.2.tmp", old),
		plant(s.Layout.Lane(taskfile.KindAPI, taskfile.DirFailed), TempFileName(hostTag("elsewhere"), 1, 2), time.Now()),
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
