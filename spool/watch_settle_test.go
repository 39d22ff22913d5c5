package spool

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
)

// A file written in place, with attribute changes between chunks, is taken
// only once it is whole: an attribute event is not a rename into place.
func TestWatcher_SlowWritersWithAttributeChanges(t *testing.T) {
	for _, mode := range []string{"fsnotify", "poll"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			seen := startWatcher(t, dir, mode == "poll", 400*time.Millisecond)
			var wg sync.WaitGroup
			want := map[string]int{}
			for i, kind := range []string{"chmod", "prealloc", "chmod+prealloc", "plain"} {
				name := kind + ".yaml"
				size := 64<<10 + i*1000
				want[name] = size
				wg.Add(1)
				go func() {
					defer wg.Done()
					// 8 KiB every 150 ms, as a copy over a slow link writes.
					chunks := (size + 8<<10 - 1) / (8 << 10)
					w := testkit.SlowWrite{Chunks: chunks, Over: time.Duration(chunks) * 150 * time.Millisecond,
						Chmod: kind != "plain" && kind != "prealloc", Prealloc: kind != "plain" && kind != "chmod"}
					data := bytes.Repeat([]byte("content: x\n"), size/11+1)[:size]
					if err := w.Write(filepath.Join(dir, name), append([]byte("model: fast\n"), data[12:]...)); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			for name, size := range want {
				_, got := waitSeen(t, seen, name, 5*time.Second)
				if got != int64(size) {
					t.Errorf("%s taken at %d bytes, want %d", name, got, size)
				}
			}
		})
	}
}

// A file that stays empty until its writer's last moment is not taken
// while it is empty and still changing.
func TestWatcher_EmptyUntilTheEnd(t *testing.T) {
	dir := t.TempDir()
	seen := startWatcher(t, dir, false, 400*time.Millisecond)
	p := filepath.Join(dir, "late.yaml")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		time.Sleep(150 * time.Millisecond) // the writer's pace
		f.Chmod(0o640)                     // still at work: attributes, no bytes yet
		if _, _, ok := seen.get("late.yaml"); ok {
			t.Fatal("an empty file being written was taken")
		}
	}
	f.WriteString("model: fast\ncontent: at last\n")
	f.Close()
	if _, size := waitSeen(t, seen, "late.yaml", 5*time.Second); size == 0 {
		t.Fatal("taken empty")
	}
}

// A rename into place is the fast path only when it is certain and the
// file is complete: an empty or NUL-filled file renamed in waits for
// settle like any other.
func TestWatcher_RenamedFastPathNeedsContent(t *testing.T) {
	dir := t.TempDir()
	seen := startWatcher(t, dir, false, 5*time.Second)
	for _, c := range []struct {
		name string
		data []byte
	}{{"empty.yaml", nil}, {"nul.yaml", make([]byte, 100)}, {"ok.yaml", []byte("model: m\ncontent: c\n")}} {
		tmp := filepath.Join(dir, "."+c.name+".tmp")
		if err := os.WriteFile(tmp, c.data, 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, c.name)); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	waitSeen(t, seen, "ok.yaml", 3*time.Second)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a complete renamed file took %s", d)
	}
	for _, n := range []string{"empty.yaml", "nul.yaml"} {
		if _, _, ok := seen.get(n); ok {
			t.Errorf("%s was taken at once", n)
		}
	}
}

// A file moved in from a folder the watcher does not see is not certainly
// a finished rename: it settles.
func TestWatcher_MoveFromElsewhereSettles(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	seen := startWatcher(t, dir, false, 600*time.Millisecond)
	src := filepath.Join(other, "x.yaml")
	if err := os.WriteFile(src, []byte("model: m\ncontent: c\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := os.Rename(src, filepath.Join(dir, "x.yaml")); err != nil {
		t.Fatal(err)
	}
	at, _ := waitSeen(t, seen, "x.yaml", 5*time.Second)
	if d := at.Sub(start); d < 600*time.Millisecond {
		t.Fatalf("taken after %s, before settle", d)
	}
}
