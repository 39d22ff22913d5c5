package spool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestStore_AccountHold(t *testing.T) {
	cfg := &config.Config{Spool: t.TempDir(), Accounts: map[string]config.AccountConf{"ops1": {}, "ops2": {}}}
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
	// A hold file nobody can read, or one no daemon sealed, holds
	// nothing, is listed as foreign and is never removed (issue 20).
	for i, data := range []string{"until: soon\n", "until: 2099-01-01T00:00:00Z\nreason: forged\nsince: 2026-01-01T00:00:00Z\n"} {
		p := filepath.Join(s.Layout.Accounts(), "ops2"+taskfile.HeldExt)
		if err := os.WriteFile(p, []byte(data), FilePerm); err != nil {
			t.Fatal(err)
		}
		if h2, ok := s.AccountHold("ops2"); ok || s.AccountHeld("ops2", now) {
			t.Fatalf("%d: foreign hold read as a hold: %+v", i, h2)
		}
		if was, err := s.ReleaseAccount("ops2"); was || !errors.Is(err, ErrForeign) {
			t.Fatalf("%d: release of a foreign hold: %v %v", i, was, err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%d: foreign hold removed: %v", i, err)
		}
		if f := s.CheckForeign(); len(f) != 1 || f[0].File != "accounts/ops2.held" {
			t.Fatalf("%d: foreign list %+v", i, f)
		}
	}
	// A hold of an account the config does not know is foreign too.
	os.WriteFile(filepath.Join(s.Layout.Accounts(), "stranger"+taskfile.HeldExt), []byte("until: 2099-01-01T00:00:00Z\n"), FilePerm)
	if _, ok := s.AccountHold("stranger"); ok {
		t.Fatal("a hold of an account not in the config")
	}
	if hs := s.Holds(); len(hs) != 1 {
		t.Fatalf("Holds with foreign files beside: %+v", hs)
	}
	if was, err := s.ReleaseAccount("ops1"); !was || err != nil {
		t.Fatalf("release ops1: %v %v", was, err)
	}
	if was, err := s.ReleaseAccount("ops1"); was || err != nil {
		t.Fatalf("second release: %v %v", was, err)
	}
	if err := s.HoldAccount(taskfile.Hold{Account: "../x", Until: now}); err == nil {
		t.Fatal("a hold outside accounts/ was written")
	}
}

// FuzzDecodeHold: hold files are spoolgate's own, but any file may stand
// in accounts/: decoding must never panic, and what it accepts re-encodes
// to a file it accepts again.
func FuzzDecodeHold(f *testing.F) {
	h := taskfile.Hold{Until: time.Date(2026, 3, 5, 14, 0, 0, 0, time.UTC), Reason: "Try again in 2 minutes", Site: "s", Wait: "2m0s", Since: time.Date(2026, 3, 5, 13, 58, 0, 0, time.UTC)}
	seed, _ := h.Encode()
	f.Add(seed)
	f.Add([]byte("until: 2026-03-05T14:00:00Z\n"))
	f.Add([]byte("until: x\n"))
	f.Add([]byte("reason: &a [*a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := taskfile.DecodeHold(data)
		if err != nil {
			return
		}
		out, err := h.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := taskfile.DecodeHold(out); err != nil {
			t.Fatalf("re-encoded hold does not decode: %v\n%s", err, out)
		}
	})
}

// TestStore_ReplayedHold: a genuine, sealed hold copied aside and put
// back after `resume --account` (another process) ended it holds nothing,
// whether or not its tombstone is still there; so does an older hold put
// back over a newer one. A new hold after the release holds.
func TestStore_ReplayedHold(t *testing.T) {
	cfg := &config.Config{Spool: t.TempDir(), Accounts: map[string]config.AccountConf{"ops1": {}}}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	daemon, cli := NewStore(cfg, nil), NewStore(cfg, nil) // one installation's key (processKey), two processes' memories
	if err := daemon.Layout.Create(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	hold := func(since time.Time) []byte {
		t.Helper()
		if err := daemon.HoldAccount(taskfile.Hold{Account: "ops1", Until: now.Add(time.Hour), Reason: "limit", Since: since, By: "h:1"}); err != nil {
			t.Fatal(err)
		}
		if !daemon.AccountHeld("ops1", now) {
			t.Fatal("a fresh hold does not hold")
		}
		data, err := os.ReadFile(daemon.holdPath("ops1"))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	putBack := func(data []byte) {
		t.Helper()
		if err := os.WriteFile(daemon.holdPath("ops1"), data, FilePerm); err != nil {
			t.Fatal(err)
		}
	}
	first := hold(now)
	if was, err := cli.ReleaseAccount("ops1"); !was || err != nil {
		t.Fatalf("resume --account: %v %v", was, err)
	}
	putBack(first)
	for name, s := range map[string]*Store{"daemon": daemon, "cli": cli, "a new process": NewStore(cfg, nil)} {
		if s.AccountHeld("ops1", now) {
			t.Errorf("%s: the replayed hold holds", name)
		}
	}
	if f := daemon.CheckForeign(); len(f) != 1 || !strings.Contains(f[0].Reason, "put back") {
		t.Errorf("foreign list %+v, want the replayed hold", f)
	}
	// Its tombstone deleted as well: the daemon saw the hold end.
	if err := os.Remove(daemon.releasedPath("ops1")); err != nil {
		t.Fatal(err)
	}
	if daemon.AccountHeld("ops1", now) {
		t.Error("the replayed hold holds once its tombstone is gone")
	}
	// A new hold holds; the first put back over it does not.
	second := hold(now.Add(time.Minute))
	putBack(first)
	if daemon.AccountHeld("ops1", now) {
		t.Error("an older hold put back over a newer one holds")
	}
	putBack(second)
	if !daemon.AccountHeld("ops1", now) {
		t.Error("the current hold, put back as it was, does not hold")
	}
}
