package spool

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// SealPace: accounts/NAME.pace, an account's sends as its pace counts them.
const SealPace = "pace"

func (s *Store) pacePath(account string) string {
	return filepath.Join(s.Layout.Accounts(), account+taskfile.PaceExt)
}

// PaceRecord reads the account's pace record; ok is false when there is
// none or it is foreign (then the account paces as if it had not sent:
// logged once, never deleted, replaced at its next send).
func (s *Store) PaceRecord(account string) (r taskfile.PaceRecord, ok bool) {
	if !taskfile.ValidAccount(account) {
		return r, false
	}
	p := s.pacePath(account)
	body, _, err := s.ReadSealed(SealPace, p, taskfile.MaxPaceSize+256)
	if err != nil {
		return r, false
	}
	r, err = taskfile.DecodePace(body)
	if err != nil {
		_ = s.foreign(SealPace, p, err)
		return taskfile.PaceRecord{}, false
	}
	r.Account = account
	return r, true
}

// RecordPaceSend adds a send of account at to its pace record, drops the
// sends that no longer count, and draws the next gap's jitter; the
// account's lease (or its session's lock) makes this daemon its only
// writer meanwhile.
func (s *Store) RecordPaceSend(account string, at time.Time, p config.Pace) error {
	r, _ := s.PaceRecord(account)
	keep := p.Keep()
	sends := r.Sends[:0:0]
	for _, t := range r.Sends {
		if keep > 0 && t.After(at.Add(-keep)) && !t.After(at) {
			sends = append(sends, t)
		}
	}
	if keep > 0 {
		sends = append(sends, at)
	}
	if n := max(p.PerMinute, p.PerHour, p.PerDay); len(sends) > n {
		sends = sends[len(sends)-n:] // the older ones bind no cap
	}
	r.Sends, r.Next = sends, p.NextGap(at, rand.Float64())
	r.PacedUntil, r.PacedBy = time.Time{}, ""
	return s.writePace(account, r)
}

// MarkPaced records that the account's next task waits for its pace
// until until (by rule by), for status; it writes only when that changed.
func (s *Store) MarkPaced(account string, until time.Time, by string) error {
	r, _ := s.PaceRecord(account)
	if r.PacedUntil.Equal(until.UTC().Truncate(time.Millisecond)) && r.PacedBy == by {
		return nil
	}
	r.PacedUntil, r.PacedBy = until, by
	return s.writePace(account, r)
}

func (s *Store) writePace(account string, r taskfile.PaceRecord) error {
	if !taskfile.ValidAccount(account) {
		return fmt.Errorf("pace: account %q cannot name a file", account)
	}
	data, err := r.Encode()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Layout.Accounts(), DirPerm); err != nil {
		return err
	}
	if err := s.WriteSealedAtomic(SealPace, s.pacePath(account), data); err != nil {
		return fmt.Errorf("pace record of %s: %w", account, err)
	}
	return nil
}
