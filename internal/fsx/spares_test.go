//go:build linux

package fsx

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/testkit"
)

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
		setup  func(p *Spares) string // returns the spare's path
		reused bool
		check  func(t *testing.T, path string)
	}{
		{name: "young spare is reused", reused: true, setup: func(p *Spares) string {
			path := mk(".sg-a.tmp", "old")
			p.Keep(path)
			return path
		}},
		{name: "linked elsewhere: never truncated", setup: func(p *Spares) string {
			path := mk(".sg-b.tmp", "precious")
			p.Keep(path)
			if err := os.Link(path, filepath.Join(dir, "other.yaml")); err != nil {
				t.Fatal(err)
			}
			return path
		}, check: func(t *testing.T, _ string) {
			if b, _ := os.ReadFile(filepath.Join(dir, "other.yaml")); string(b) != "precious" {
				t.Fatalf("the other name's content became %q", b)
			}
		}},
		{name: "replaced by a folder", setup: func(p *Spares) string {
			path := mk(".sg-c.tmp", "x")
			p.Keep(path)
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
		{name: "gone", setup: func(p *Spares) string {
			path := mk(".sg-d.tmp", "x")
			p.Keep(path)
			os.Remove(path)
			return path
		}},
		{name: "too old", setup: func(p *Spares) string {
			path := mk(".sg-e.tmp", "x")
			p.Keep(path)
			p.mu.Lock()
			p.dirs[dir][0].at = time.Now().Add(-SpareTTL)
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
			p := NewSpares()
			p.SetOn(true)
			path := tt.setup(p)
			got, f, size, ok := p.Take(dir)
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
			} else if p.IsSpare(path) {
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
	p := NewSpares()
	p.SetOn(true)
	for i := range maxSpares + 3 {
		path := filepath.Join(dir, ".sg-"+string(rune('a'+i))+".tmp")
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		p.Keep(path)
	}
	if n := len(testkit.OwnTemps(t, dir)); n != maxSpares {
		t.Fatalf("%d temps left, want %d", n, maxSpares)
	}
	p.SetOn(false)
	if n := len(testkit.OwnTemps(t, dir)); n != 0 {
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
			fs := Files{Tag: "t", Spares: NewSpares()}
			fs.Spares.SetOn(true)
			spare := filepath.Join(dir, ".sg-t-1.tmp")
			if err := os.WriteFile(spare, []byte(tt.old), 0o600); err != nil {
				t.Fatal(err)
			}
			fs.Spares.Keep(spare)
			tmp, err := fs.WriteTempFrom(filepath.Join(dir, "a.yaml"), []byte(tt.new), true)
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
