//go:build unix

package spool

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestStore_ArchiveSymlinkedMonth: an archive month folder planted as a
// symlink to a folder outside the spool: nothing is created outside the
// spool (was done/ and logs/ made there, the move alone refused), the task
// stays where it is, and the refusal is logged once over many passes (was
// an error at every pass).
func TestStore_ArchiveSymlinkedMonth(t *testing.T) {
	cfg, err := config.ParseConfig([]byte("host: h\nretention: {done: 30d}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Spool = filepath.Join(t.TempDir(), "spool")
	var buf syncBuffer
	s := NewStore(cfg, slog.New(slog.NewTextHandler(&buf, nil)))
	if err := s.Layout.Create(); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	now := time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC)
	fin := now.Add(-60 * 24 * time.Hour)
	os.MkdirAll(s.Layout.Archive(taskfile.KindAPI), 0o750)
	if err := os.Symlink(outside, filepath.Join(s.Layout.Archive(taskfile.KindAPI), fin.Format("2006-01"))); err != nil {
		t.Fatal(err)
	}
	tk := taskfile.Task{TaskID: "old", ModelKind: taskfile.KindAPI, Model: "m", Content: "x", State: taskfile.StateSuccess, FinishedAt: fin}
	data, _ := tk.Encode()
	p := s.Layout.TaskPath(taskfile.KindAPI, taskfile.DirDone, "old")
	os.WriteFile(p, data, 0o640)
	os.Chtimes(p, fin, fin)
	for range 20 {
		if _, err := s.Archive(context.Background(), now); err != nil {
			t.Fatal(err)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("created outside the spool: %v", ents)
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("the task left done/: %v", err)
	}
	if n := strings.Count(buf.String(), "archive: left in place"); n != 1 {
		t.Errorf("%d log lines over 20 passes, want 1:\n%s", n, buf.String())
	}
}
