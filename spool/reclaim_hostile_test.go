//go:build unix

package spool

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestStore_ReclaimUnreadable: files in running/ that are no task (garbage,
// fifos) are logged once each however many rescans see them (was one ERROR
// line per file per rescan: 10,010 in 10 s for 1,000 files), and once
// staleAfter old they leave running/ for failed/, bytes untouched with a
// reason beside, so they no longer count as running for ever. Nothing is
// lost: every one of them is in failed/.
func TestStore_ReclaimUnreadable(t *testing.T) {
	s := newTestStore(t)
	var buf syncBuffer
	s.Log = slog.New(slog.NewTextHandler(&buf, nil))
	dir := s.Layout.Lane(taskfile.KindWeb, taskfile.DirRunning)
	const n = 200
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("bad%03d.yaml", i))
		if i%10 == 0 {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(p, []byte("taskId: [\n"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	for i := range 50 { // 50 rescans within staleAfter
		if _, err := s.Reclaim(taskfile.KindWeb, now.Add(time.Duration(i)*time.Millisecond), func(string) bool { return false }); err != nil {
			t.Fatal(err)
		}
	}
	if lines := strings.Count(buf.String(), "\n"); lines != n {
		t.Fatalf("%d log lines for %d unreadable files over 50 rescans, want %d", lines, n, n)
	}
	if left, _ := fsx.ReadDirNames(dir); len(left) != n {
		t.Fatalf("moved before staleAfter: %d left", len(left))
	}
	later := now.Add(s.Cfg.Timing().StaleAfter + time.Second)
	if _, err := s.Reclaim(taskfile.KindWeb, later, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if left, _ := fsx.ReadDirNames(dir); len(left) != 0 {
		t.Fatalf("%d files still in running/ past staleAfter", len(left))
	}
	failed, _ := fsx.ReadDirNames(s.Layout.Lane(taskfile.KindWeb, taskfile.DirFailed))
	if len(failed) != 2*n {
		t.Fatalf("failed/ holds %d files, want %d files and their reasons", len(failed), 2*n)
	}
	data, _ := os.ReadFile(filepath.Join(s.Layout.Lane(taskfile.KindWeb, taskfile.DirFailed), "bad001.yaml"))
	if string(data) != "taskId: [\n" {
		t.Errorf("bytes changed: %q", data)
	}
}

// TestStore_ReclaimFutureHeartbeat: a running file whose heartbeat is in
// 2099 is reclaimed staleAfter after it was first seen (was: running for
// ever); one whose heartbeat moves (a live owner with a clock ahead) is not.
func TestStore_ReclaimFutureHeartbeat(t *testing.T) {
	s := newTestStore(t)
	future := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	put := func(id string, hb time.Time) {
		tk := &taskfile.Task{TaskID: id, Model: "chat", Content: "x", State: taskfile.StateRunning, Attempt: 1, Owner: "other:1", StartedAt: hb, HeartbeatAt: hb, SubmittedAt: time.Now()}
		data, _ := s.EncodeTask(taskfile.KindWeb, tk)
		if err := os.WriteFile(s.Layout.TaskPath(taskfile.KindWeb, taskfile.DirRunning, id), data, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	put("late", future)
	put("ahead", future)
	now := time.Now()
	none := func(string) bool { return false }
	if r, _ := s.Reclaim(taskfile.KindWeb, now, none); len(r) != 0 {
		t.Fatalf("reclaimed at first sight: %+v", r)
	}
	put("ahead", future.Add(time.Second)) // its owner beat again
	r, _ := s.Reclaim(taskfile.KindWeb, now.Add(s.Cfg.Timing().StaleAfter+time.Second), none)
	if len(r) != 1 || r[0].Task.TaskID != "late" {
		t.Fatalf("reclaimed %+v, want late only", r)
	}
}
