package spool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
)

type seenFiles struct {
	mu   sync.Mutex
	at   map[string]time.Time
	size map[string]int64
}

func (s *seenFiles) get(name string) (time.Time, int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.at[name]
	return t, s.size[name], ok
}

func startWatcher(t *testing.T, dir string, poll bool, settle time.Duration) *seenFiles {
	t.Helper()
	seen := &seenFiles{at: map[string]time.Time{}, size: map[string]int64{}}
	w := &Watcher{Dirs: []WatchDir{{Path: dir}}, Settle: settle, Rescan: 100 * time.Millisecond, Poll: poll,
		Handle: func(d WatchDir, name string) {
			p := filepath.Join(d.Path, name)
			fi, _ := os.Stat(p)
			seen.mu.Lock()
			seen.at[name] = time.Now()
			if fi != nil {
				seen.size[name] = fi.Size()
			}
			seen.mu.Unlock()
			os.Rename(p, filepath.Join(d.Path, "."+name+".taken"))
		}}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return seen
}

func waitSeen(t *testing.T, s *seenFiles, name string, d time.Duration) (time.Time, int64) {
	t.Helper()
	var at time.Time
	var size int64
	testkit.Wait(t, name+" to be reported", d, func() bool {
		var ok bool
		at, size, ok = s.get(name)
		return ok
	})
	return at, size
}

// A file renamed into place is taken at once, without waiting for settle.
func TestWatcher_RenamedIsImmediate(t *testing.T) {
	dir := t.TempDir()
	seen := startWatcher(t, dir, false, 5*time.Second)
	tmp := filepath.Join(dir, ".x.tmp")
	os.WriteFile(tmp, []byte("model: m\ncontent: c\n"), 0o640)
	start := time.Now()
	os.Rename(tmp, filepath.Join(dir, "x.yaml"))
	at, _ := waitSeen(t, seen, "x.yaml", 3*time.Second)
	if d := at.Sub(start); d > 2*time.Second {
		t.Fatalf("rename took %s: it waited for settle", d)
	}
}

// A file written in place is taken only once it has held still for settle,
// and then whole.
func TestWatcher_InPlaceWaitsForSettle(t *testing.T) {
	for _, poll := range []bool{false, true} {
		t.Run(map[bool]string{false: "fsnotify", true: "poll"}[poll], func(t *testing.T) {
			dir := t.TempDir()
			seen := startWatcher(t, dir, poll, 300*time.Millisecond)
			f, err := os.Create(filepath.Join(dir, "slow.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			for i := 0; i < 8; i++ {
				n, _ := f.WriteString("content: more and more text\n")
				total += int64(n)
				if _, _, ok := seen.get("slow.yaml"); ok {
					t.Fatalf("taken after %d of 8 writes", i+1)
				}
				time.Sleep(100 * time.Millisecond) // the writer's own pace, not synchronization
			}
			f.Close()
			_, size := waitSeen(t, seen, "slow.yaml", 5*time.Second)
			if size != total {
				t.Fatalf("taken at %d bytes, want %d", size, total)
			}
		})
	}
}

// Files that are not drops are left alone.
func TestWatcher_IgnoresNonDrops(t *testing.T) {
	dir := t.TempDir()
	seen := startWatcher(t, dir, false, 50*time.Millisecond)
	for _, n := range []string{".hidden.yaml", "x.tmp", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o640)
	}
	os.WriteFile(filepath.Join(dir, "marker.yaml"), []byte("x"), 0o640)
	waitSeen(t, seen, "marker.yaml", 3*time.Second)
	for _, n := range []string{".hidden.yaml", "x.tmp", "notes.txt"} {
		if _, _, ok := seen.get(n); ok {
			t.Errorf("%s was taken", n)
		}
	}
}

// TestWatcher_DropOrder: a burst of drops is handed over in the order the
// files arrived (intake stamps submittedAt in that order, which orders the
// queue), not in a map's or the names' order.
func TestWatcher_DropOrder(t *testing.T) {
	dir := t.TempDir()
	const n = 40
	got := make(chan string, n)
	w := &Watcher{Dirs: []WatchDir{{Path: dir}}, Settle: time.Second, Rescan: time.Hour,
		Handle: func(d WatchDir, name string) {
			got <- name
			os.Rename(filepath.Join(d.Path, name), filepath.Join(d.Path, "."+name+".taken"))
		}}
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	<-w.Started()
	var want []string
	for i := n - 1; i >= 0; i-- { // names in reverse order of arrival
		name := fmt.Sprintf("d-%02d.yaml", i)
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte("content: x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	deadline := time.After(10 * time.Second)
	for i := range n {
		select {
		case name := <-got:
			if name != want[i] {
				t.Fatalf("handed over #%d: %s, want %s (the order of arrival)", i, name, want[i])
			}
		case <-deadline:
			t.Fatalf("%d of %d handed over in 10 s", i, n)
		}
	}
}
