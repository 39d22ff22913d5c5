// This file holds what an account lease is: its design, its file names
// and generation bounds, its record (LeaseInfo) and codec, and its errors.

package spool

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
	"gopkg.in/yaml.v3"
)

// Account leases keep one account on one host. Two spoolgate hosts on one
// shared spool may both run web lanes, each with its own logged-in
// profiles; a session runs a task only while its host holds the account's
// lease.
//
// A lease is a generation: <spool>/accounts/NAME.lease.<gen>, the highest
// generation being the lease. A host takes an account by creating the next
// generation with the no-overwrite move (fsx.WriteFileNew), so of two hosts
// racing for it exactly one wins, on a local disk or a share without
// RENAME_NOREPLACE alike. Only the holder rewrites its own generation
// (renewed with the heartbeat; released by marking it so). A generation
// whose renewal is older than staleAfter, or that its holder released, may
// be followed by the next one: a crashed host's accounts move to another
// host within staleAfter. A holder that finds a higher generation, or its
// own rewritten by someone else, has lost the lease. Nothing needs inotify:
// every look is a directory listing, so poll mode works.
//
// No file can wedge or double a lease (issue 20). Each generation is a
// sealed record (trust.go): a lease file that is not (planted, unreadable,
// a fifo, renamed, another installation's) is foreign. A foreign file
// above the highest sealed generation binds others for staleAfter from its
// mtime, like an unrenewed lease, and never longer: a time in the future
// counts from when this daemon first saw it. Generations are parsed with
// bounds, so no name overflows the next one. And the task file is a
// second witness: a host never takes an account while running/ holds a
// task of it with a fresh heartbeat from another owner, so renaming or
// deleting a lease file cannot put two hosts on one account.

// LeaseExt is what names an account's lease files: NAME.lease.<gen>.
const LeaseExt = ".lease."

// Generation bounds. Sealed generations count up to maxLeaseGen, one a
// take, which no installation reaches; a foreign name above maxForeignGen
// does not count towards the next generation at all, so no planted name
// can push the next one past the bound.
const (
	maxLeaseGen   = 1 << 50
	maxForeignGen = 1 << 40
)

// parseGen reads a generation: decimal digits without sign or leading
// zero, 1 to maxLeaseGen.
func parseGen(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 16 || s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	g, err := strconv.ParseInt(s, 10, 64)
	if err != nil || g < 1 || g > maxLeaseGen {
		return 0, false
	}
	return g, true
}

// leaseAccount splits a lease file name into account and the rest.
func leaseAccount(name string) (account, rest string, ok bool) {
	i := strings.LastIndex(name, LeaseExt)
	if i <= 0 {
		return "", "", false
	}
	return name[:i], name[i+len(LeaseExt):], true
}

const maxLeaseSize = 4 << 10

// ErrAccountLeased is returned by AcquireAccount when another owner holds a
// live lease; the error is a *LeasedError naming it.
var ErrAccountLeased = errors.New("account leased by another owner")

// ErrLeaseLost is returned by Renew when another owner took the lease.
var ErrLeaseLost = errors.New("account lease lost")

// LeasedError names what keeps an account from being taken: the holder
// of a live lease, a fresh foreign lease file, or another owner's running
// task of the account.
type LeasedError struct {
	Account string
	Info    LeaseInfo
}

func (e *LeasedError) Error() string {
	return fmt.Sprintf("account %s is %s (renewed %s)", e.Account, e.Info.By(), e.Info.Renewed.Format(time.RFC3339))
}

func (e *LeasedError) Unwrap() error { return ErrAccountLeased }

// LeaseInfo is an account lease's file.
type LeaseInfo struct {
	Account  string    `yaml:"-" json:"account"`
	Gen      int64     `yaml:"-" json:"gen"`
	Owner    string    `yaml:"owner" json:"owner"` // host:pid
	Token    string    `yaml:"token" json:"-"`     // which take of the lease this is
	Since    time.Time `yaml:"since" json:"since"`
	Renewed  time.Time `yaml:"renewed" json:"renewed"`
	Released bool      `yaml:"released,omitempty" json:"released,omitempty"`

	// Foreign names the foreign lease file (relative to the spool) that
	// blocks the account for at most staleAfter; Owner is empty then.
	Foreign string `yaml:"-" json:"foreign,omitempty"`
	// Task names the running task (lane/id) of another owner that
	// witnesses the account in use, when no lease file does.
	Task string `yaml:"-" json:"task,omitempty"`
}

// By says who or what holds the lease, for logs and status.
func (i LeaseInfo) By() string {
	switch {
	case i.Foreign != "":
		return "blocked by foreign file " + i.Foreign
	case i.Task != "":
		return "in use by " + i.Owner + " (its running task " + i.Task + ")"
	}
	return "leased by " + i.Owner
}

// Live reports whether the lease binds others at now.
func (i LeaseInfo) Live(now time.Time, staleAfter time.Duration) bool {
	return !i.Released && now.Sub(i.Renewed) <= staleAfter
}

// DecodeLease parses a lease file.
func DecodeLease(data []byte) (LeaseInfo, error) {
	var i LeaseInfo
	if len(data) > maxLeaseSize {
		return i, fmt.Errorf("lease file is larger than %d bytes", maxLeaseSize)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&i); err != nil {
		return LeaseInfo{}, errors.New(taskfile.OneLine(err.Error()))
	}
	if i.Owner == "" || i.Renewed.IsZero() {
		return LeaseInfo{}, errors.New("owner or renewed: missing")
	}
	return i, nil
}

func (i LeaseInfo) encode() []byte {
	i.Since, i.Renewed = i.Since.UTC().Truncate(time.Millisecond), i.Renewed.UTC().Truncate(time.Millisecond)
	b, _ := yaml.Marshal(i)
	return b
}
