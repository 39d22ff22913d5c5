package seal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestKey_Open(t *testing.T) {
	k, other := New(), New()
	good, err := k.Seal("lease", "a1.lease.5", []byte("owner: h:1\nrenewed: 2026-01-01T00:00:00Z\n"))
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(good, []byte("h:1"), []byte("h:2"), 1)
	for _, tc := range []struct {
		name       string
		key        *Key
		kind, file string
		data       []byte
		want       error
	}{
		{"genuine", k, "lease", "a1.lease.5", good, nil},
		{"renamed to a higher generation", k, "lease", "a1.lease.6", good, ErrBadSeal},
		{"another kind", k, "hold", "a1.lease.5", good, ErrBadSeal},
		{"another installation's key", other, "lease", "a1.lease.5", good, ErrBadSeal},
		{"edited body", k, "lease", "a1.lease.5", tampered, ErrBadSeal},
		{"planted, no seal", k, "lease", "a1.lease.5", []byte("owner: h:1\n"), ErrUnsealed},
		{"empty", k, "lease", "a1.lease.5", nil, ErrUnsealed},
		{"seal line not last", k, "lease", "a1.lease.5", append(bytes.Clone(good), "x: 1\n"...), ErrUnsealed},
		{"no key", nil, "lease", "a1.lease.5", good, ErrNoKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, err := tc.key.Open(tc.kind, tc.file, tc.data)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
			if err == nil && !bytes.HasPrefix(good, body) {
				t.Errorf("body %q", body)
			}
		})
	}
}

func TestKey_SealEmptyAndUnterminated(t *testing.T) {
	k := New()
	for _, body := range []string{"", "x", "2026-01-01T00:00:00Z"} {
		data, err := k.Seal("since", "since", []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		got, err := k.Open("since", "since", data)
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if want := body; len(want) > 0 && string(got) != want+"\n" {
			t.Errorf("%q: body %q", body, got)
		}
	}
}

func TestLoadOrCreate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "etc", FileName)
	k1, created, err := LoadOrCreate(p)
	if err != nil || !created {
		t.Fatalf("first: %v created %v", err, created)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	k2, created, err := LoadOrCreate(p)
	if err != nil || created {
		t.Fatalf("second: %v created %v", err, created)
	}
	data, _ := k1.Seal("x", "y", []byte("z"))
	if _, err := k2.Open("x", "y", data); err != nil {
		t.Errorf("the key read back does not open what the created one sealed: %v", err)
	}
	// A copy to another host (the same bytes) opens it too.
	q := filepath.Join(t.TempDir(), FileName)
	if err := k2.Write(q); err != nil {
		t.Fatal(err)
	}
	k3, err := Load(q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k3.Open("x", "y", data); err != nil {
		t.Errorf("copied key: %v", err)
	}
	if err := k2.Write(q); err == nil {
		t.Error("Write replaced an existing key file")
	}
}

func TestLoad_Refuses(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := New().Write(good); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abcd\n"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(good, link)
	cases := map[string]string{"short": short, "symlink": link, "missing": filepath.Join(dir, "none")}
	if runtime.GOOS != "windows" {
		open := filepath.Join(dir, "open")
		data, _ := os.ReadFile(good)
		os.WriteFile(open, data, 0o644)
		os.Chmod(open, 0o644)
		cases["readable by others"] = open
	}
	for name, p := range cases {
		if _, err := Load(p); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}

func FuzzOpen(f *testing.F) {
	k := New()
	good, _ := k.Seal("lease", "a", []byte("owner: x\n"))
	f.Add(good)
	f.Add([]byte("#sg-seal v1 00\n"))
	f.Add([]byte("owner: x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := k.Open("lease", "a", data)
		if err == nil && !bytes.HasPrefix(data, body) {
			t.Fatalf("body is not a prefix of the record")
		}
	})
}
