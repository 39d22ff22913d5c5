package spool

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
	"gopkg.in/yaml.v3"
)

// HeldExt ends the name of an account's hold file: <spool>/accounts/NAME.held.
const HeldExt = ".held"

// maxHoldSize bounds a hold file; spoolgate writes a few hundred bytes.
const maxHoldSize = 64 << 10

// Hold is a usage limit's hold on an account: a fact about the account,
// kept in the spool (<spool>/accounts/NAME.held) so that every daemon and
// `status` on any machine that sees the spool reads the same thing. While
// a hold runs, the account's tasks wait in pending and spend no attempt.
// When it ends, the next task is tried; a site that still shows its limit
// holds the account again.
type Hold struct {
	Account string    `yaml:"-"`              // from the file name
	Until   time.Time `yaml:"until"`          // the hold ends then
	Reason  string    `yaml:"reason"`         // the page's message
	Site    string    `yaml:"site,omitempty"` // the site that showed it
	// Wait is the reset the message asked for ("2m0s"), or "" when the
	// message named none and the site's limitHold applied.
	Wait  string    `yaml:"wait,omitempty"`
	Since time.Time `yaml:"since"`
	By    string    `yaml:"by,omitempty"`   // host:pid of the daemon that wrote it
	Task  string    `yaml:"task,omitempty"` // the task whose attempt met the limit

	// Err, when the file could not be read, says why; such a hold counts
	// as running until `spoolgate resume --account` ends it.
	Err string `yaml:"-"`
}

// Active reports whether the hold still runs at now.
func (h Hold) Active(now time.Time) bool { return h.Err != "" || now.Before(h.Until) }

// DecodeHold parses a hold file.
func DecodeHold(data []byte) (Hold, error) {
	var h Hold
	if len(data) > maxHoldSize {
		return h, fmt.Errorf("hold file is larger than %d bytes", maxHoldSize)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&h); err != nil {
		return Hold{}, errors.New(taskfile.OneLine(err.Error()))
	}
	if h.Until.IsZero() {
		return Hold{}, errors.New("until: missing")
	}
	return h, nil
}

// Encode renders the hold file.
func (h Hold) Encode() ([]byte, error) {
	h.Until, h.Since = h.Until.UTC().Truncate(time.Millisecond), h.Since.UTC().Truncate(time.Millisecond)
	return yaml.Marshal(h)
}

func (s *Store) holdPath(account string) string {
	return filepath.Join(s.Layout.Accounts(), account+HeldExt)
}

// HoldAccount writes (or replaces) the account's hold, durably.
func (s *Store) HoldAccount(h Hold) error {
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
	return WriteFileAtomic(s.holdPath(h.Account), data)
}

// AccountHold reads the account's hold file; ok is false when there is
// none. A file that cannot be read is a hold with Err set.
func (s *Store) AccountHold(account string) (h Hold, ok bool) {
	if !taskfile.ValidAccount(account) {
		return Hold{}, false
	}
	return readHold(s.holdPath(account), account)
}

func readHold(path, account string) (Hold, bool) {
	data, _, err := ReadOwn(path, maxHoldSize)
	if errors.Is(err, fs.ErrNotExist) {
		return Hold{}, false
	}
	if err == nil {
		var h Hold
		if h, err = DecodeHold(data); err == nil {
			h.Account = account
			return h, true
		}
	}
	return Hold{Account: account, Err: err.Error(), Reason: "unreadable hold file: " + err.Error()}, true
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
func (s *Store) Holds() []Hold {
	ents, err := os.ReadDir(s.Layout.Accounts())
	if err != nil {
		return nil
	}
	var out []Hold
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), HeldExt)
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
