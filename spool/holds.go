package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func (s *Store) holdPath(account string) string {
	return filepath.Join(s.Layout.Accounts(), account+taskfile.HeldExt)
}

// HoldAccount writes (or replaces) the account's hold, durably.
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
	return s.files.writeAtomic(s.holdPath(h.Account), data)
}

// AccountHold reads the account's hold file; ok is false when there is
// none. A file that cannot be read is a hold with Err set.
func (s *Store) AccountHold(account string) (h taskfile.Hold, ok bool) {
	if !taskfile.ValidAccount(account) {
		return taskfile.Hold{}, false
	}
	return readHold(s.holdPath(account), account)
}

func readHold(path, account string) (taskfile.Hold, bool) {
	data, _, err := ReadOwn(path, taskfile.MaxHoldSize)
	if errors.Is(err, fs.ErrNotExist) {
		return taskfile.Hold{}, false
	}
	if err == nil {
		var h taskfile.Hold
		if h, err = taskfile.DecodeHold(data); err == nil {
			h.Account = account
			return h, true
		}
	}
	return taskfile.Hold{Account: account, Err: err.Error(), Reason: "unreadable hold file: " + err.Error()}, true
}

// AccountHeld reports whether the account's hold runs at now.
func (s *Store) AccountHeld(account string, now time.Time) bool {
	h, ok := s.AccountHold(account)
	return ok && h.Active(now)
}

// ReleaseAccount ends the account's hold by removing its file; it reports
// whether there was one.
func (s *Store) ReleaseAccount(account string) (bool, error) {
	if !taskfile.ValidAccount(account) {
		return false, fmt.Errorf("account %q cannot name a file", account)
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

// Holds lists every hold file of the spool, running or ended, by account.
func (s *Store) Holds() []taskfile.Hold {
	ents, err := os.ReadDir(s.Layout.Accounts())
	if err != nil {
		return nil
	}
	var out []taskfile.Hold
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), taskfile.HeldExt)
		if !ok || !taskfile.ValidAccount(name) {
			continue
		}
		if h, ok := readHold(filepath.Join(s.Layout.Accounts(), e.Name()), name); ok {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Account < out[j].Account })
	return out
}
