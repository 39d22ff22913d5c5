//go:build unix

package spool

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The cost of the safe opens, each beside what it replaced, in the same
// run: go test -run '^$' -bench Safe ./spool

// BenchmarkSafe_TaskLogAppend: one task-log line through the openat walk
// from the spool root, against a plain O_APPEND open of the same file.
func BenchmarkSafe_TaskLogAppend(b *testing.B) {
	s := newBenchStore(b)
	line := []byte("time=... level=INFO msg=\"attempt started\"\n")
	b.Run("plain", func(b *testing.B) {
		p := s.Layout.LogPath(taskfile.KindAPI, "plain")
		for b.Loop() {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, FilePerm)
			if err != nil {
				b.Fatal(err)
			}
			f.Write(line)
			f.Close()
		}
	})
	b.Run("safe", func(b *testing.B) {
		for b.Loop() {
			if err := s.appendTaskLog(taskfile.KindAPI, "safe", line); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSafe_FolderGuard: the folder check each write and move of a
// task file now makes, against the durable write it guards.
func BenchmarkSafe_FolderGuard(b *testing.B) {
	s := newBenchStore(b)
	dir := s.Layout.Lane(taskfile.KindAPI, taskfile.DirRunning)
	b.Run("guard", func(b *testing.B) {
		for b.Loop() {
			if err := s.files.GuardDir(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("durable write", func(b *testing.B) {
		p := filepath.Join(dir, "x.yaml")
		for b.Loop() {
			if err := s.WriteFileAtomic(p, []byte("taskId: x\n")); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func newBenchStore(b *testing.B) *Store {
	cfg, err := config.ParseConfig(nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Spool = filepath.Join(b.TempDir(), "spool")
	s := NewStore(cfg, nil)
	if err := s.Layout.Create(); err != nil {
		b.Fatal(err)
	}
	return s
}
