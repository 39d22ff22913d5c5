package cli

import (
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/spoolgate/spoolgate/internal/seal"
)

// TestInstallKey: service install creates the installation key beside the
// config, mode 0600, owned by the service's user; a second install keeps it.
func TestInstallKey(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "spoolgate.yaml")
	os.WriteFile(cfg, []byte("spool: spool\n"), 0o600)
	name := ""
	if u, err := user.Current(); err == nil && runtime.GOOS != "windows" {
		name = u.Username
	}
	p, created, err := installKey(cfg, name)
	if err != nil || !created || p != filepath.Join(dir, seal.FileName) {
		t.Fatalf("first install: %s %v %v", p, created, err)
	}
	if fi, err := os.Stat(p); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600) {
		t.Fatalf("key file: %v %v", fi, err)
	}
	before, _ := os.ReadFile(p)
	if _, created, err := installKey(cfg, name); err != nil || created {
		t.Fatalf("second install: %v %v", created, err)
	}
	if after, _ := os.ReadFile(p); string(after) != string(before) {
		t.Fatal("a second install replaced the key")
	}
}
