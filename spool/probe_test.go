package spool

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/internal/testkit/smbd"
)

func TestProbeDir_LocalDisk(t *testing.T) {
	dir := t.TempDir()
	p := ProbeDir(dir, "")
	for _, c := range []string{CheckLink, CheckExcl, CheckDirSync, CheckOverOpen} {
		if !p.OK(c) {
			t.Errorf("%s: %s", c, p.Checks[c])
		}
	}
	if runtime.GOOS == "linux" && (!p.OK(CheckNoReplace) || p.Claim != ClaimRename) {
		t.Errorf("claim %q, no-replace %q: want rename-noreplace on a local disk", p.Claim, p.Checks[CheckNoReplace])
	}
	if err := p.Refusal(); err != nil {
		t.Error(err)
	}
	if !strings.HasPrefix(p.Line, "share probe "+dir+": no-replace rename yes") {
		t.Errorf("line %q", p.Line)
	}
	// The probe leaves nothing behind.
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("probe left %d files", len(ents))
	}
}

// bindfs (FUSE) has hard links but not renameat2's flags: claims go by
// link+unlink, and that is still safe.
func TestProbeDir_Bindfs(t *testing.T) {
	smbd.NeedFUSE(t, "bindfs")
	under, mnt := t.TempDir(), t.TempDir()
	if out, err := exec.Command("bindfs", under, mnt).CombinedOutput(); err != nil {
		t.Fatalf("bindfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("fusermount", "-u", "-z", mnt).Run() })
	p := ProbeDir(mnt, "")
	t.Log(p.Line)
	if p.Claim != ClaimLink || p.OK(CheckNoReplace) || p.OK(CheckExchange) || !p.OK(CheckLink) {
		t.Errorf("bindfs: %s", p.Line)
	}
}

// smbnetfs (a userspace SMB mount) has neither renameat2's flags nor
// links: no claim is safe, and the refusal names both and what gives them.
func TestProbeDir_Smbnetfs(t *testing.T) {
	smbd.NeedFUSE(t, "smbnetfs")
	share := t.TempDir()
	s := smbd.Start(t, map[string]string{"spool": share})
	mnt := s.Mount(t, "spool")
	p := ProbeDir(mnt, "")
	t.Log(p.Line)
	if p.Claim != ClaimNone {
		t.Fatalf("smbnetfs: claim %q: %s", p.Claim, p.Line)
	}
	err := p.Refusal()
	if err == nil {
		t.Fatal("no refusal")
	}
	for _, want := range []string{"no-replace rename: EINVAL", "hard links: EPERM", "cifs", "file server itself"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal lacks %q: %v", want, err)
		}
	}
	if ents, _ := os.ReadDir(share); len(ents) != 0 {
		t.Errorf("probe left %d files on the share: %v", len(ents), filepath.Base(ents[0].Name()))
	}
}
