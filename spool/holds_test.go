package spool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestStore_AccountHold(t *testing.T) {
	cfg := &config.Config{Spool: t.TempDir()}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	s := NewStore(cfg, nil)
	if err := s.Layout.Create(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, ok := s.AccountHold("ops1"); ok || s.AccountHeld("ops1", now) {
		t.Fatal("a hold before any was written")
	}
	h := taskfile.Hold{Account: "ops1", Until: now.Add(2 * time.Minute), Reason: "Try again in 2 minutes", Site: "chat", Wait: "2m0s", Since: now, By: "h:1", Task: "t1"}
	if err := s.HoldAccount(h); err != nil {
		t.Fatal(err)
	}
	got, ok := s.AccountHold("ops1")
	if !ok || got.Reason != h.Reason || !got.Until.Equal(h.Until.UTC().Truncate(time.Millisecond)) || got.Account != "ops1" || got.Wait != "2m0s" || got.Task != "t1" {
		t.Fatalf("read back %+v, %v", got, ok)
	}
	if !s.AccountHeld("ops1", now) || s.AccountHeld("ops1", now.Add(3*time.Minute)) {
		t.Fatal("held: want true now and false after until")
	}
	if hs := s.Holds(); len(hs) != 1 || hs[0].Account != "ops1" {
		t.Fatalf("Holds: %+v", hs)
	}
	// A hold file nobody can read holds until resumed by hand.
	if err := os.WriteFile(filepath.Join(s.Layout.Accounts(), "ops2"+taskfile.HeldExt), []byte("until: soon\n"), FilePerm); err != nil {
		t.Fatal(err)
	}
	if h2, ok := s.AccountHold("ops2"); !ok || h2.Err == "" || !h2.Active(now.Add(24*time.Hour)) || !strings.Contains(h2.Reason, "unreadable") {
		t.Fatalf("unreadable hold: %+v %v", h2, ok)
	}
	for _, a := range []string{"ops1", "ops2"} {
		if was, err := s.ReleaseAccount(a); !was || err != nil {
			t.Fatalf("release %s: %v %v", a, was, err)
		}
	}
	if was, err := s.ReleaseAccount("ops1"); was || err != nil {
		t.Fatalf("second release: %v %v", was, err)
	}
	if err := s.HoldAccount(taskfile.Hold{Account: "../x", Until: now}); err == nil {
		t.Fatal("a hold outside accounts/ was written")
	}
}
