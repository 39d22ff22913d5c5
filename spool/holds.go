package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func (s *Store) holdPath(account string) string {
	return filepath.Join(s.Layout.Accounts(), account+taskfile.HeldExt)
}

// HoldAccount writes (or replaces) the account's hold, durably and sealed:
// only a hold a daemon of this installation wrote holds anything.
func (s *Store) HoldAccount(h taskfile.Hold) error {
	if !taskfile.ValidAccount(h.Account) {
		return fmt.Errorf("hold: account %q cannot name a file", h.Account)
	}
	data, err := h.Encode()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Layout.Accounts(), DirPerm); err != nil {
		return err
	}
	return s.WriteSealedAtomic(SealHold, s.holdPath(h.Account), data)
}

// AccountHold reads the account's hold file; ok is false when there is
// none, or when it is foreign (not sealed by a daemon of this
// installation, or unreadable): such a file holds nothing, is logged once
// and listed by status (CheckForeign), and is never deleted. An account
// the config does not know has no hold.
func (s *Store) AccountHold(account string) (h taskfile.Hold, ok bool) {
	if !taskfile.ValidAccount(account) || !KnownAccounts(s.Cfg)[account] {
		return taskfile.Hold{}, false
	}
	h, err := s.readHold(account)
	return h, err == nil
}

// A sealed hold is genuine, not yet fresh: a copy of one put back after
// `resume --account` ended it would hold the account again (and notify
// again). So each hold is known by when and by whom it was written
// (holdKey: no two holds share it), release leaves a sealed tombstone,
// accounts/NAME.released, naming the hold it ended, and a store remembers
// every hold it saw end (its file gone, or its tombstone): a hold that
// matches either is a replay, foreign.

// ErrReplayed: a genuine hold that was ended before, put back.
var ErrReplayed = errors.New("a hold that was released before, put back (a replayed copy)")

func holdKey(h taskfile.Hold) string { return h.Since.UTC().Format(time.RFC3339Nano) + " " + h.By }

func (s *Store) releasedPath(account string) string {
	return filepath.Join(s.Layout.Accounts(), account+".released")
}

// readHold reads and checks one hold: fs.ErrNotExist, a *ForeignError,
// or the hold.
func (s *Store) readHold(account string) (taskfile.Hold, error) {
	p := s.holdPath(account)
	body, _, err := s.ReadSealed(SealHold, p, taskfile.MaxHoldSize+256)
	if errors.Is(err, fs.ErrNotExist) {
		s.holdGone(account, "")
	}
	if err != nil {
		return taskfile.Hold{}, err
	}
	h, err := taskfile.DecodeHold(body)
	if err != nil {
		return taskfile.Hold{}, s.foreign(SealHold, p, err)
	}
	h.Account = account
	key := holdKey(h)
	if tomb, _, err := s.ReadSealed(SealReleased, s.releasedPath(account), 1024); err == nil {
		s.holdGone(account, strings.TrimSuffix(string(tomb), "\n"))
	}
	if s.released(account, key) || !s.sawHold(account, h) {
		return taskfile.Hold{}, s.foreign(SealHold, p, ErrReplayed)
	}
	return h, nil
}

// sawHold records h as the account's hold this store saw last, the one
// seen before it as ended (superseded); it reports false for a hold
// older than the one seen before (a superseded copy put back).
func (s *Store) sawHold(account string, h taskfile.Hold) bool {
	s.trust.mu.Lock()
	defer s.trust.mu.Unlock()
	if s.trust.holdSeen == nil {
		s.trust.holdSeen = map[string]taskfile.Hold{}
	}
	if s.trust.released == nil {
		s.trust.released = map[string]bool{}
	}
	prev, ok := s.trust.holdSeen[account]
	switch {
	case ok && h.Since.Before(prev.Since):
		return false
	case ok && holdKey(prev) != holdKey(h):
		s.trust.released[account+"\x00"+holdKey(prev)] = true
	}
	s.trust.holdSeen[account] = h
	return true
}

// holdGone remembers tomb (a released hold's key, "" for none) and the
// hold last seen of account as ended, when its file is gone or tomb names
// it. The last seen hold stays the newest seen: an older one put back is
// a replay too.
func (s *Store) holdGone(account, tomb string) {
	s.trust.mu.Lock()
	defer s.trust.mu.Unlock()
	if s.trust.released == nil {
		s.trust.released = map[string]bool{}
	}
	if tomb != "" {
		s.trust.released[account+"\x00"+tomb] = true
	}
	if seen, ok := s.trust.holdSeen[account]; ok && (tomb == "" || tomb == holdKey(seen)) {
		s.trust.released[account+"\x00"+holdKey(seen)] = true
	}
}

// released reports whether this store saw the hold key of account end.
func (s *Store) released(account, key string) bool {
	s.trust.mu.Lock()
	defer s.trust.mu.Unlock()
	return s.trust.released[account+"\x00"+key]
}

// AccountHeld reports whether the account's hold runs at now.
func (s *Store) AccountHeld(account string, now time.Time) bool {
	h, ok := s.AccountHold(account)
	return ok && h.Active(now)
}

// ReleaseAccount ends the account's hold by removing its file; it reports
// whether there was one. A foreign hold file is left alone (it never held
// anything): the error is then a *ForeignError.
func (s *Store) ReleaseAccount(account string) (bool, error) {
	if !taskfile.ValidAccount(account) {
		return false, fmt.Errorf("account %q cannot name a file", account)
	}
	h, err := s.readHold(account)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	// The tombstone first: a copy of this hold put back is foreign to
	// every daemon, also one that never saw it end.
	if err := s.WriteSealedAtomic(SealReleased, s.releasedPath(account), []byte(holdKey(h))); err != nil {
		return false, fmt.Errorf("release %s: %w", account, err)
	}
	s.holdGone(account, holdKey(h))
	err = os.Remove(s.holdPath(account))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, fsx.SyncDir(s.Layout.Accounts())
}

// Holds lists the holds of the config's accounts, running or ended, by
// account. Hold files of other accounts and foreign ones are not read
// into it (CheckForeign lists them).
func (s *Store) Holds() []taskfile.Hold {
	var out []taskfile.Hold
	for a := range KnownAccounts(s.Cfg) {
		if !taskfile.ValidAccount(a) {
			continue
		}
		if h, err := s.readHold(a); err == nil {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Account < out[j].Account })
	return out
}

// ClearSignInHold ends the account's hold when it is a signed-out page's
// or a challenge's (taskfile.Hold.SignIn), and reports whether it ended
// one; a usage limit's hold is left to run out (signing in does not lift
// a site's limit). `spoolgate login` calls it once the page shows the
// account signed in; so may anything else that sees the page signed in
// again (a remote sign-in). The account's tasks are then tried at the next
// round, and the page is checked again by the next task.
func (s *Store) ClearSignInHold(account string) (bool, error) {
	h, ok := s.AccountHold(account)
	if !ok || !h.SignIn() {
		return false, nil
	}
	return s.ReleaseAccount(account)
}

// An account's pace record, beside its hold: both are facts about the
// account that every daemon on the spool acts on alike.

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

// PaceSent moves the account's send recorded at sending (written before
// the click) to sent, when the page showed the message accepted, and its
// gap's end with it: the vendor counts a send when it arrives, and a
// click that took long (a loaded machine) must not let the next send
// come sooner after it than the pace allows. No such send: nothing.
func (s *Store) PaceSent(account string, sending, sent time.Time) error {
	r, ok := s.PaceRecord(account)
	sending = sending.UTC().Truncate(time.Millisecond)
	shift := sent.Sub(sending)
	if !ok || shift <= 0 {
		return nil
	}
	for i := len(r.Sends) - 1; i >= 0; i-- {
		if r.Sends[i].Equal(sending) {
			r.Sends[i] = sent
			if !r.Next.IsZero() {
				r.Next = r.Next.Add(shift)
			}
			return s.writePace(account, r)
		}
	}
	return nil
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
