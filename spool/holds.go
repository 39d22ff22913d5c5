package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

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

// readHold reads and checks one hold: fs.ErrNotExist, a *ForeignError,
// or the hold.
func (s *Store) readHold(account string) (taskfile.Hold, error) {
	p := s.holdPath(account)
	body, _, err := s.ReadSealed(SealHold, p, taskfile.MaxHoldSize+256)
	if err != nil {
		return taskfile.Hold{}, err
	}
	h, err := taskfile.DecodeHold(body)
	if err != nil {
		return taskfile.Hold{}, s.foreign(SealHold, p, err)
	}
	h.Account = account
	return h, nil
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
	if _, err := s.readHold(account); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	err := os.Remove(s.holdPath(account))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, SyncDir(s.Layout.Accounts())
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
