package spool

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestStore_SetPriority(t *testing.T) {
	s := newTestStore(t)
	sub := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tk := &Task{TaskID: "t", ModelKind: KindAPI, Model: "fast", Batch: "b", Content: "x", State: StatePending, Attempt: 1,
		SubmittedAt: sub, NotBefore: sub.Add(time.Minute), Error: "HTTP 503"}
	if err := putTask(s, KindAPI, DirPending, tk); err != nil {
		t.Fatal(err)
	}
	got, err := s.SetPriority(KindAPI, "t", PriorityHigh)
	if err != nil {
		t.Fatal(err)
	}
	disk, err := s.Read(KindAPI, DirPending, "t")
	if err != nil {
		t.Fatal(err)
	}
	want := tk.Clone()
	want.Priority = PriorityHigh
	if !sameRecord(disk, want) || !sameRecord(got, want) {
		t.Errorf("on disk %+v, want only the priority changed: %+v", disk, want)
	}
	if _, err := s.SetPriority(KindAPI, "t", PriorityHigh); err != nil {
		t.Errorf("setting it again: %v", err)
	}
	if _, err := s.SetPriority(KindAPI, "t", "urgent"); err == nil || !strings.Contains(err.Error(), "want high, normal or low") {
		t.Errorf("bad level: %v", err)
	}
	// Claimed meanwhile: it is no longer pending, and stays where it is.
	if err := s.move(KindAPI, DirPending, DirRunning, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPriority(KindAPI, "t", PriorityLow); !errors.Is(err, ErrNotPending) {
		t.Errorf("running task: %v, want ErrNotPending", err)
	}
	if _, err := os.Lstat(s.Layout.TaskPath(KindAPI, DirPending, "t")); !os.IsNotExist(err) {
		t.Error("SetPriority recreated pending/t")
	}
	if _, err := s.SetPriority(KindAPI, "nosuch", PriorityLow); !errors.Is(err, ErrNotPending) {
		t.Errorf("no such task: %v", err)
	}
	if err := s.RequestReindex(KindAPI, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(s.Layout.PriorityPath(KindAPI, "t")); err != nil {
		t.Error(err)
	}
}

func TestPriority(t *testing.T) {
	for _, tc := range []struct {
		p     Priority
		valid bool
		level int
		name  string
	}{
		{"", true, 0, "normal"}, {"normal", true, 0, "normal"}, {"high", true, 1, "high"}, {"low", true, -1, "low"},
		{"High", false, 0, "High"}, {"urgent", false, 0, "urgent"},
	} {
		if tc.p.Valid() != tc.valid || tc.p.Level() != tc.level || tc.p.String() != tc.name {
			t.Errorf("%q: valid %v level %d name %s", tc.p, tc.p.Valid(), tc.p.Level(), tc.p)
		}
	}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		base   int
		waited time.Duration
		aging  time.Duration
		want   int
	}{
		{levelLow, 59 * time.Minute, time.Hour, levelLow}, {levelLow, time.Hour, time.Hour, levelNormal},
		{levelLow, 2 * time.Hour, time.Hour, levelHigh}, {levelLow, 9 * time.Hour, time.Hour, levelHigh},
		{levelNormal, 61 * time.Minute, time.Hour, levelHigh}, {levelHigh, 0, time.Hour, levelHigh},
		{levelLow, 9 * time.Hour, 0, levelLow}, {levelLow, -time.Hour, time.Hour, levelLow},
	} {
		if got := aged(tc.base, now.Add(-tc.waited), now, tc.aging); got != tc.want {
			t.Errorf("aged(%d, waited %s, aging %s) = %d, want %d", tc.base, tc.waited, tc.aging, got, tc.want)
		}
	}
}
