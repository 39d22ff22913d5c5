package spool

import (
	"os"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The pace record keeps the sends its caps count (no more), the gap's end
// with its jitter, and the paced-until mark, which a send clears; a record
// a daemon did not seal counts nothing. A sign-in hold ends with
// ClearSignInHold; a usage limit's does not.
func TestStore_PaceRecordAndSignInHold(t *testing.T) {
	s := paceStore(t)
	p := config.Pace{Gap: config.Duration(2 * time.Second), Jitter: config.Duration(500 * time.Millisecond), PerMinute: 2}
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	for i, at := range []time.Time{t0.Add(-2 * time.Minute), t0, t0.Add(10 * time.Second), t0.Add(20 * time.Second)} {
		if err := s.RecordPaceSend("ops1", at, p); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	r, ok := s.PaceRecord("ops1")
	if !ok || len(r.Sends) != 2 || !r.Sends[0].Equal(t0.Add(10*time.Second)) || !r.Sends[1].Equal(t0.Add(20*time.Second)) {
		t.Fatalf("record %+v: want the last two sends (the cap is 2)", r)
	}
	if gap := r.Next.Sub(t0.Add(20 * time.Second)); gap < 2*time.Second || gap >= 2500*time.Millisecond {
		t.Errorf("next gap %s, want 2s to 2.5s", gap)
	}
	until := t0.Add(70 * time.Second)
	if err := s.MarkPaced("ops1", until, "2 per minute"); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(s.pacePath("ops1"))
	if err := s.MarkPaced("ops1", until, "2 per minute"); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(s.pacePath("ops1")); !os.SameFile(fi, fi2) {
		t.Error("an unchanged mark rewrote the record")
	}
	if r, _ := s.PaceRecord("ops1"); !r.PacedUntil.Equal(until) || r.PacedBy != "2 per minute" {
		t.Errorf("mark %+v", r)
	}
	if err := s.RecordPaceSend("ops1", until, p); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.PaceRecord("ops1"); !r.PacedUntil.IsZero() || r.PacedBy != "" {
		t.Errorf("a send leaves the mark: %+v", r)
	}
	if err := os.WriteFile(s.pacePath("ops1"), []byte("sends: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.PaceRecord("ops1"); ok {
		t.Error("an unsealed record counted")
	}

	limit := taskfile.Hold{Account: "ops1", Until: t0.Add(time.Hour), Since: t0, Reason: "limit", By: "h:1"}
	if err := s.HoldAccount(limit); err != nil {
		t.Fatal(err)
	}
	if ended, err := s.ClearSignInHold("ops1"); ended || err != nil {
		t.Errorf("a usage limit's hold ended by a sign-in: %v %v", ended, err)
	}
	out := taskfile.Hold{Account: "ops1", Kind: taskfile.HoldSignedOut, Since: t0.Add(time.Second), Reason: "signed out", By: "h:1", Screenshot: "web/logs/t1.1.png"}
	if err := s.HoldAccount(out); err != nil {
		t.Fatal(err)
	}
	if h, ok := s.AccountHold("ops1"); !ok || !h.Active(t0.Add(1000*time.Hour)) || h.Screenshot != out.Screenshot {
		t.Fatalf("signed-out hold %+v %v: want it running until released", h, ok)
	}
	if ended, err := s.ClearSignInHold("ops1"); !ended || err != nil {
		t.Fatalf("ClearSignInHold: %v %v", ended, err)
	}
	if _, ok := s.AccountHold("ops1"); ok {
		t.Error("the hold is still there")
	}
}

// TestStore_PaceSent: a send recorded before its click moves to when the
// page showed it sent, and its gap's end with it; a send not recorded
// (another's, or already moved) moves nothing.
func TestStore_PaceSent(t *testing.T) {
	s := paceStore(t)
	p := config.Pace{Gap: config.Duration(2 * time.Second), PerMinute: 4}
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 123456789, time.UTC)
	for _, at := range []time.Time{t0.Add(-10 * time.Second), t0} {
		if err := s.RecordPaceSend("ops1", at, p); err != nil {
			t.Fatal(err)
		}
	}
	sent := t0.Add(400 * time.Millisecond).Truncate(time.Millisecond)
	if err := s.PaceSent("ops1", t0, sent); err != nil {
		t.Fatal(err)
	}
	r, _ := s.PaceRecord("ops1")
	if len(r.Sends) != 2 || !r.Sends[1].Equal(sent) || !r.Sends[0].Equal(t0.Add(-10*time.Second).Truncate(time.Millisecond)) || !r.Next.Equal(sent.Add(2*time.Second)) {
		t.Fatalf("after the send was seen sent: %+v", r)
	}
	for _, sending := range []time.Time{t0, t0.Add(time.Hour)} { // moved already; never recorded
		if err := s.PaceSent("ops1", sending, sent.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if r2, _ := s.PaceRecord("ops1"); !r2.Sends[1].Equal(sent) {
			t.Errorf("sending %s moved a send: %+v", sending, r2)
		}
	}
}

// paceStore is a store of a new spool with one account, ops1.
func paceStore(t *testing.T) *Store {
	t.Helper()
	cfg := &config.Config{Spool: t.TempDir(), Accounts: map[string]config.AccountConf{"ops1": {}}}
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	s := NewStore(cfg, nil)
	if err := s.Layout.Create(); err != nil {
		t.Fatal(err)
	}
	return s
}
