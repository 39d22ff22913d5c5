//go:build linux

package spool

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// temps lists the spoolgate temp files in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if IsOwnTemp(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestStore_SparesRecycle: a daemon's rewrites reuse the file the last
// one swapped out, so a rewrite allocates no inode (the recently_deleted
// walk of ext4 without a journal); without KeepSpares, and after
// DropSpares, no temp file is left.
func TestStore_SparesRecycle(t *testing.T) {
	for _, keep := range []bool{true, false} {
		name := map[bool]string{true: "kept", false: "not kept"}[keep]
		t.Run(name, func(t *testing.T) {
			s := newTestStore(t)
			if keep {
				s.KeepSpares()
			}
			k := taskfile.KindAPI
			task := &taskfile.Task{TaskID: "t1", Model: "fast", Content: "x", State: taskfile.StateRunning}
			path := s.Layout.TaskPath(k, taskfile.DirRunning, "t1")
			data, _ := task.Encode()
			if err := s.WriteFileAtomic(path, data); err != nil {
				t.Fatal(err)
			}
			running := s.Layout.Lane(k, taskfile.DirRunning)
			var spareBefore uint64
			for i := range 6 {
				before := inodeOf(t, path)
				task.Content = strings.Repeat("y", i+1)
				if _, err := s.rewrite(k, taskfile.DirRunning, task); err != nil {
					t.Fatal(err)
				}
				got, err := s.Read(k, taskfile.DirRunning, "t1")
				if err != nil || got.Content != task.Content {
					t.Fatalf("rewrite %d: read %v, %v", i, got, err)
				}
				sp := temps(t, running)
				if !keep {
					if len(sp) != 0 {
						t.Fatalf("rewrite %d: temp files left: %v", i, sp)
					}
					continue
				}
				// The version swapped out stays as the one spare, and
				// the next rewrite writes into it.
				if len(sp) != 1 || inodeOf(t, filepath.Join(running, sp[0])) != before {
					t.Fatalf("rewrite %d: spares %v, want the old version's file", i, sp)
				}
				if i > 0 && inodeOf(t, path) != spareBefore {
					t.Fatalf("rewrite %d: a new file, not the spare", i)
				}
				spareBefore = before
			}
			if keep {
				if n := s.CleanTemps(); n != 0 || len(temps(t, running)) != 1 {
					t.Fatalf("CleanTemps removed %d of our spares", n)
				}
				s.DropSpares()
			}
			if sp := temps(t, running); len(sp) != 0 {
				t.Fatalf("temp files left: %v", sp)
			}
		})
	}
}

// TestSpares_Take: a spare is reused only while it is still a regular
// file of one link and young; anything else is dropped, never written.
func TestSpares_Take(t *testing.T) {
	dir := t.TempDir()
	mk := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name   string
		setup  func(p *spares) string // returns the spare's path
		reused bool
		check  func(t *testing.T, path string)
	}{
		{name: "young spare is reused", reused: true, setup: func(p *spares) string {
			path := mk(".sg-a.tmp", "old")
			p.keep(path)
			return path
		}},
		{name: "linked elsewhere: never truncated", setup: func(p *spares) string {
			path := mk(".sg-b.tmp", "precious")
			p.keep(path)
			if err := os.Link(path, filepath.Join(dir, "other.yaml")); err != nil {
				t.Fatal(err)
			}
			return path
		}, check: func(t *testing.T, _ string) {
			if b, _ := os.ReadFile(filepath.Join(dir, "other.yaml")); string(b) != "precious" {
				t.Fatalf("the other name's content became %q", b)
			}
		}},
		{name: "replaced by a folder", setup: func(p *spares) string {
			path := mk(".sg-c.tmp", "x")
			p.keep(path)
			os.Remove(path)
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
			return path
		}, check: func(t *testing.T, path string) {
			if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
				t.Fatalf("the folder in its place: %v %v", fi, err)
			}
		}},
		{name: "gone", setup: func(p *spares) string {
			path := mk(".sg-d.tmp", "x")
			p.keep(path)
			os.Remove(path)
			return path
		}},
		{name: "too old", setup: func(p *spares) string {
			path := mk(".sg-e.tmp", "x")
			p.keep(path)
			p.mu.Lock()
			p.dirs[dir][0].at = time.Now().Add(-spareTTL)
			p.mu.Unlock()
			return path
		}, check: func(t *testing.T, path string) {
			if _, err := os.Lstat(path); !os.IsNotExist(err) {
				t.Fatalf("an expired spare is removed: %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newSpares()
			p.setOn(true)
			path := tt.setup(p)
			got, f, size, ok := p.take(dir)
			if ok {
				f.Close()
			}
			if ok != tt.reused || ok && got != path {
				t.Fatalf("take = %q, %v; want reused %v", got, ok, tt.reused)
			}
			if ok {
				// Not emptied (its blocks stay allocated): the writer cuts it.
				if b, _ := os.ReadFile(got); int64(len(b)) != size || size == 0 {
					t.Fatalf("take's size %d, the spare holds %q", size, b)
				}
			} else if p.isSpare(path) {
				t.Fatal("a dropped spare is still counted as ours")
			}
			if tt.check != nil {
				tt.check(t, path)
			}
			os.RemoveAll(path)
			os.Remove(filepath.Join(dir, "other.yaml"))
		})
	}
}

// TestSpares_Bounded: a folder keeps at most maxSpares; the rest are
// removed at once.
func TestSpares_Bounded(t *testing.T) {
	dir := t.TempDir()
	p := newSpares()
	p.setOn(true)
	for i := range maxSpares + 3 {
		path := filepath.Join(dir, ".sg-"+string(rune('a'+i))+".tmp")
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		p.keep(path)
	}
	if n := len(temps(t, dir)); n != maxSpares {
		t.Fatalf("%d temps left, want %d", n, maxSpares)
	}
	p.setOn(false)
	if n := len(temps(t, dir)); n != 0 {
		t.Fatalf("%d temps left after setOn(false)", n)
	}
}

// TestFiles_WriteTempFromSpare: a spare is overwritten in place, and what
// its older version had past the new data is cut, whether the new one is
// shorter, as long or longer.
func TestFiles_WriteTempFromSpare(t *testing.T) {
	for _, tt := range []struct{ name, old, new string }{
		{"shorter", "state: running\nresult: a long answer\n", "state: done\n"},
		{"as long", "state: done\n", "state: fail\n"},
		{"longer", "a\n", "state: done\nresult: ok\n"},
		{"empty", "state: done\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fs := files{tag: "t", spares: newSpares()}
			fs.spares.setOn(true)
			spare := filepath.Join(dir, ".sg-t-1.tmp")
			if err := os.WriteFile(spare, []byte(tt.old), 0o600); err != nil {
				t.Fatal(err)
			}
			fs.spares.keep(spare)
			tmp, err := fs.writeTempFrom(filepath.Join(dir, "a.yaml"), []byte(tt.new), true)
			if err != nil {
				t.Fatal(err)
			}
			if tmp != spare {
				t.Fatalf("wrote %s, not the spare %s", tmp, spare)
			}
			if b, _ := os.ReadFile(tmp); string(b) != tt.new {
				t.Fatalf("the spare holds %q, want %q", b, tt.new)
			}
		})
	}
}
