//go:build unix

package fsx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestTempName_Short(t *testing.T) {
	long := filepath.Join("/x", strings.Repeat("春", taskfile.MaxTaskIDBytes/3)+".yaml")
	name := filepath.Base(TempName(long, HostTag("a-rather-long-host-name.example.internal")))
	if !IsOwnTemp(name) || len(name) > 41 {
		t.Errorf("temp name %q (%d bytes): want an own temp of at most 41 bytes", name, len(name))
	}
	ti, ok := parseTemp(name)
	if !ok || ti.pid != os.Getpid() || ti.tag != HostTag("a-rather-long-host-name.example.internal") {
		t.Errorf("parseTemp(%q) = %+v %v", name, ti, ok)
	}
}

func TestTempLeftover(t *testing.T) {
	now := time.Now()
	stale := 90 * time.Second
	old, young := now.Add(-2*stale), now.Add(-time.Second)
	dead := testkit.DeadPid(t)
	me := os.Getpid()
	alive := os.Getppid()
	mine := func(pid int) string { return TempFileName(HostTag("h1"), pid, 7) }
	other := TempFileName(HostTag("h2"), alive, 7)
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
			got := TempLeftover(tt.file, HostTag("h1"), tt.mtime, now, stale, tt.dropBox) != ""
			if got != tt.remove {
				t.Errorf("TempLeftover(%s) = %v, want %v", tt.file, got, tt.remove)
			}
		})
	}
}
