//go:build unix

package spool

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// syncBuffer is a log sink safe for the store's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newLoggedStore(t *testing.T) (*Store, *syncBuffer) {
	t.Helper()
	s := newTestStore(t)
	buf := &syncBuffer{}
	s.Log = slog.New(slog.NewTextHandler(buf, nil))
	return s, buf
}

// within fails the test if fn has not returned after d: an open that
// blocks (a fifo without O_NONBLOCK) shows as a timeout, not a hang.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s blocked for over %s", what, d)
	}
}

func TestOpenAppend(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(outside, []byte("keep\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		make func(p string)
		kind string // "" means the open succeeds
	}{
		{"new file", func(string) {}, ""},
		{"existing file", func(p string) { os.WriteFile(p, nil, 0o640) }, ""},
		{"symlink", func(p string) { os.Symlink(outside, p) }, "symlink"},
		{"dangling symlink", func(p string) { os.Symlink(filepath.Join(dir, "nowhere"), p) }, "symlink"},
		{"fifo", func(p string) { syscall.Mkfifo(p, 0o640) }, "fifo"},
		{"directory", func(p string) { os.Mkdir(p, 0o750) }, "directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			tt.make(p)
			var f *os.File
			var err error
			within(t, 5*time.Second, "fsx.OpenAppend", func() { f, err = fsx.OpenAppend(p) })
			if tt.kind == "" {
				if err != nil {
					t.Fatal(err)
				}
				f.Close()
				return
			}
			var nr *fsx.NotRegularError
			if !errors.As(err, &nr) || nr.Kind != tt.kind || !errors.Is(err, fsx.ErrNotRegular) {
				t.Fatalf("err = %v, want a refusal naming a %s", err, tt.kind)
			}
			if f != nil {
				t.Error("a file came back with the refusal")
			}
		})
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep\n" {
		t.Errorf("the symlink's target changed: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("a dangling symlink's target was created")
	}
}

func TestReadDir_Refuses(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b"), nil, 0o640)
	os.WriteFile(filepath.Join(dir, "a"), nil, 0o640)
	ents, err := fsx.ReadDir(dir)
	if err != nil || len(ents) != 2 || ents[0].Name() != "a" {
		t.Fatalf("fsx.ReadDir = %v, %v; want a, b", ents, err)
	}
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(dir, link)
	fifo := filepath.Join(t.TempDir(), "fifo")
	syscall.Mkfifo(fifo, 0o640)
	for _, p := range []string{link, fifo} {
		within(t, 5*time.Second, "fsx.ReadDir", func() { _, err = fsx.ReadDir(p) })
		if !errors.Is(err, fsx.ErrNotRegular) {
			t.Errorf("fsx.ReadDir(%s) = %v, want a refusal", filepath.Base(p), err)
		}
	}
}

func TestSwitchOn(t *testing.T) {
	dir := t.TempDir()
	file, link, fifo, sub := filepath.Join(dir, "f"), filepath.Join(dir, "l"), filepath.Join(dir, "p"), filepath.Join(dir, "d")
	os.WriteFile(file, nil, 0o640)
	os.Symlink(file, link)
	syscall.Mkfifo(fifo, 0o640)
	os.Mkdir(sub, 0o750)
	for p, want := range map[string]bool{file: true, link: false, fifo: false, sub: false, filepath.Join(dir, "none"): false} {
		on, err := fsx.SwitchOn(p)
		if on != want {
			t.Errorf("fsx.SwitchOn(%s) = %v, want %v", filepath.Base(p), on, want)
		}
		if (err != nil) != (!want && p != filepath.Join(dir, "none")) {
			t.Errorf("fsx.SwitchOn(%s) err = %v", filepath.Base(p), err)
		}
	}
}

// A switch file that is not a regular file is not honoured and is logged
// once.
func TestStore_PausedIgnoresSpecialFiles(t *testing.T) {
	s, logs := newLoggedStore(t)
	if err := syscall.Mkfifo(s.Layout.Paused(taskfile.KindAPI), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/etc/passwd", filepath.Join(s.Layout.Accounts(), "ops.disabled"))
	for range 3 {
		if s.Paused(taskfile.KindAPI) || s.AccountDisabled("ops") {
			t.Fatal("a fifo or symlink switched something")
		}
	}
	if n := strings.Count(logs.String(), "switch file ignored"); n != 2 {
		t.Errorf("logged %d times, want once per file:\n%s", n, logs)
	}
	os.Remove(s.Layout.Paused(taskfile.KindAPI))
	os.WriteFile(s.Layout.Paused(taskfile.KindAPI), nil, 0o640)
	if !s.Paused(taskfile.KindAPI) {
		t.Error("a regular pause file is not honoured")
	}
}

// The task log: a symlink or fifo in logs/ is refused, never followed and
// never waited on; the writer reports success to the attempt and logs the
// problem once per task.
func TestStore_TaskLog(t *testing.T) {
	s, logs := newLoggedStore(t)
	outside := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(outside, []byte("keep\n"), 0o640)
	logsDir := s.Layout.Lane(taskfile.KindAPI, taskfile.DirLogs)
	os.Symlink(outside, filepath.Join(logsDir, "sym.log"))
	syscall.Mkfifo(filepath.Join(logsDir, "fifo.log"), 0o640)
	// A fifo with a reader: the open succeeds, and fstat refuses it.
	syscall.Mkfifo(filepath.Join(logsDir, "read.log"), 0o640)
	rd, err := os.OpenFile(filepath.Join(logsDir, "read.log"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for _, id := range []string{"sym", "fifo", "read", "ok"} {
		w := s.TaskLog(taskfile.KindAPI, id)
		within(t, 5*time.Second, "task log "+id, func() {
			for range 3 {
				if n, err := w.Write([]byte("line\n")); err != nil || n != 5 {
					t.Errorf("%s: Write = %d, %v; want the attempt to go on", id, n, err)
				}
			}
		})
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep\n" {
		t.Errorf("written through the symlink: %q", b)
	}
	if b, _ := os.ReadFile(s.Layout.LogPath(taskfile.KindAPI, "ok")); string(b) != "line\nline\nline\n" {
		t.Errorf("ok.log = %q", b)
	}
	for _, id := range []string{"sym", "fifo", "read"} {
		if n := strings.Count(logs.String(), "taskId="+id+" "); n != 1 {
			t.Errorf("%s: logged %d times, want once:\n%s", id, n, logs)
		}
	}
	if err := s.AppendLog(taskfile.KindAPI, "sym", "x"); !errors.Is(err, fsx.ErrNotRegular) {
		t.Errorf("AppendLog through a symlink: %v", err)
	}
}

// A lane's logs/ folder swapped for a symlink: the walk from the spool
// root refuses it, at the moment of the write.
func TestStore_TaskLogFolderSwapped(t *testing.T) {
	s, _ := newLoggedStore(t)
	outside := t.TempDir()
	logsDir := s.Layout.Lane(taskfile.KindAPI, taskfile.DirLogs)
	if err := os.Rename(logsDir, logsDir+".old"); err != nil {
		t.Fatal(err)
	}
	os.Symlink(outside, logsDir)
	s.TaskLog(taskfile.KindAPI, "x").Write([]byte("line\n"))
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("written through the swapped folder: %v", ents)
	}
}

func TestLayout_CreateRefusesLinks(t *testing.T) {
	root := filepath.Join(t.TempDir(), "spool")
	outside := t.TempDir()
	if err := os.MkdirAll(root, 0o750); err != nil {
		t.Fatal(err)
	}
	os.Symlink(outside, filepath.Join(root, "api"))
	l := NewLayout(root)
	err := l.Create()
	if !errors.Is(err, fsx.ErrNotRegular) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("Create = %v, want a refusal of the symlinked api/", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("folders made through the link: %v", ents)
	}
	if err := l.CheckFolders(); !errors.Is(err, fsx.ErrNotRegular) {
		t.Errorf("CheckFolders = %v", err)
	}
	os.Remove(filepath.Join(root, "api"))
	if err := l.Create(); err != nil {
		t.Fatal(err)
	}
	if err := l.CheckFolders(); err != nil {
		t.Fatal(err)
	}
	// A symlinked root is the operator's choice and is fine.
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(root, link)
	if err := NewLayout(link).CheckFolders(); err != nil {
		t.Errorf("symlinked root: %v", err)
	}
}

// A folder swapped for a symlink while the daemon runs: intake holds (the
// drop stays), the fault is logged once, and writes refuse the folder.
func TestStore_IntakeHoldsOnSwappedFolder(t *testing.T) {
	s, logs := newLoggedStore(t)
	outside := t.TempDir()
	pending := s.Layout.Lane(taskfile.KindAPI, taskfile.DirPending)
	os.Rename(pending, pending+".old")
	os.Symlink(outside, pending)
	in := s.Layout.Lane(taskfile.KindAPI, taskfile.DirIncoming)
	os.WriteFile(filepath.Join(in, "a.yaml"), []byte("model: fast\ncontent: x\n"), 0o640)
	for range 3 {
		res, err := s.Intake(in, "a.yaml", taskfile.KindAPI)
		if err != nil || res.Outcome != Vanished {
			t.Fatalf("intake = %+v, %v; want it held", res, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(in, "a.yaml")); err != nil {
		t.Errorf("the drop moved: %v", err)
	}
	if n := strings.Count(logs.String(), "spool folder unsafe"); n != 1 {
		t.Errorf("fault logged %d times, want once:\n%s", n, logs)
	}
	if err := s.WriteFileAtomic(filepath.Join(pending, "x.yaml"), []byte("x")); !errors.Is(err, fsx.ErrNotRegular) {
		t.Errorf("write through the swapped folder: %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("written outside: %v", ents)
	}
	os.Remove(pending)
	os.Rename(pending+".old", pending)
	if err := s.CheckLayout(); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Intake(in, "a.yaml", taskfile.KindAPI); err != nil || res.Outcome != Accepted {
		t.Fatalf("after repair: %+v, %v", res, err)
	}
}
