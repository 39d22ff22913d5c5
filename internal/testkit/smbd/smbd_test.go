//go:build linux

package smbd

import (
	"os"
	"path/filepath"
	"testing"
)

// The harness itself: a put through smbclient lands in the exported
// folder, and a smbnetfs mount sees it.
func TestServer_PutAndMount(t *testing.T) {
	share := t.TempDir()
	s := Start(t, map[string]string{"spool": share})
	local := t.TempDir()
	if err := os.WriteFile(filepath.Join(local, "a.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := s.Client(local, "spool", "put a.txt b.txt"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(share, "b.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("share holds %q, %v", b, err)
	}
	m := s.Mount(t, "spool")
	if b, err := os.ReadFile(filepath.Join(m, "b.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("mount reads %q, %v", b, err)
	}
}
