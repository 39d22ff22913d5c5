package spool

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
// generation with the no-overwrite move (WriteFileNew), so of two hosts
// racing for it exactly one wins, on a local disk or a share without
// RENAME_NOREPLACE alike. Only the holder rewrites its own generation
// (renewed with the heartbeat; released by marking it so). A generation
// whose renewal is older than staleAfter, or that its holder released, may
// be followed by the next one: a crashed host's accounts move to another
// host within staleAfter. A holder that finds a higher generation, or its
// own rewritten by someone else, has lost the lease. Nothing needs inotify:
// every look is a directory listing, so poll mode works.

// LeaseExt is what names an account's lease files: NAME.lease.<gen>.
const LeaseExt = ".lease."

const maxLeaseSize = 4 << 10

// ErrAccountLeased is returned by AcquireAccount when another owner holds a
// live lease; the error is a *LeasedError naming it.
var ErrAccountLeased = errors.New("account leased by another owner")

// ErrLeaseLost is returned by Renew when another owner took the lease.
var ErrLeaseLost = errors.New("account lease lost")

// LeasedError names the holder of a live lease.
type LeasedError struct {
	Account string
	Info    LeaseInfo
}

func (e *LeasedError) Error() string {
	return fmt.Sprintf("account %s is leased by %s (renewed %s)", e.Account, e.Info.Owner, e.Info.Renewed.Format(time.RFC3339))
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

// AccountLease is a lease this process holds.
type AccountLease struct {
	s    *Store
	mu   sync.Mutex // guards info: a lane reads it while a runner renews
	info LeaseInfo
}

func (s *Store) leasePath(account string, gen int64) string {
	return filepath.Join(s.Layout.Accounts(), account+LeaseExt+strconv.FormatInt(gen, 10))
}

// leaseGens lists the generations of account's lease files, highest first
// is not promised; top is the highest (0 when there is none).
func (s *Store) leaseGens(account string) (gens []int64, top int64, err error) {
	ents, err := ReadDir(s.Layout.Accounts())
	if err != nil {
		return nil, 0, err
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), account+LeaseExt)
		if !ok {
			continue
		}
		g, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || g <= 0 {
			continue
		}
		gens = append(gens, g)
		top = max(top, g)
	}
	return gens, top, nil
}

// AccountLeaseInfo reads the account's current lease; ok is false when it
// has none. An unreadable top generation reads as a live lease of owner
// "unknown" renewed at the file's mtime, so it is taken over only once
// staleAfter has passed.
func (s *Store) AccountLeaseInfo(account string) (LeaseInfo, bool) {
	if !taskfile.ValidTaskID(account) {
		return LeaseInfo{}, false
	}
	_, top, err := s.leaseGens(account)
	if err != nil || top == 0 {
		return LeaseInfo{}, false
	}
	return s.readLease(account, top)
}

func (s *Store) readLease(account string, gen int64) (LeaseInfo, bool) {
	data, fi, err := ReadOwn(s.leasePath(account, gen), maxLeaseSize)
	if errors.Is(err, fs.ErrNotExist) {
		return LeaseInfo{}, false
	}
	var i LeaseInfo
	if err == nil {
		i, err = DecodeLease(data)
	}
	if err != nil {
		i = LeaseInfo{Owner: "unknown"}
		if fi != nil {
			i.Renewed = fi.ModTime()
		}
	}
	i.Account, i.Gen = account, gen
	return i, true
}

// AcquireAccount takes account's lease for owner, or renews it if owner
// holds it already. It returns a *LeasedError (matching ErrAccountLeased)
// while another owner holds a live one.
func (s *Store) AcquireAccount(account, owner string, now time.Time) (*AccountLease, error) {
	if !taskfile.ValidTaskID(account) {
		return nil, fmt.Errorf("account lease: %q cannot name a file", account)
	}
	staleAfter := s.Cfg.Timing().StaleAfter
	for range 3 {
		_, top, err := s.leaseGens(account)
		if err != nil {
			return nil, fmt.Errorf("account lease: %w", err)
		}
		if top > 0 {
			cur, ok := s.readLease(account, top)
			if ok && cur.Live(now, staleAfter) {
				if cur.Owner != owner {
					return nil, &LeasedError{Account: account, Info: cur}
				}
				l := &AccountLease{s: s, info: cur}
				return l, l.Renew(now)
			}
		}
		tok := make([]byte, 8)
		_, _ = rand.Read(tok)
		info := LeaseInfo{Account: account, Gen: top + 1, Owner: owner, Token: hex.EncodeToString(tok), Since: now, Renewed: now}
		err = s.files.writeNew(s.leasePath(account, info.Gen), info.encode())
		if errors.Is(err, ErrExists) || errors.Is(err, fs.ErrExist) {
			continue // another host took this generation: look again
		}
		if err != nil {
			return nil, fmt.Errorf("account lease: %w", err)
		}
		l := &AccountLease{s: s, info: info}
		l.sweep()
		return l, nil
	}
	return nil, fmt.Errorf("account lease %s: contended: %w", account, ErrAccountLeased)
}

// sweep removes the generations below ours: they bind nobody.
func (l *AccountLease) sweep() {
	gens, _, err := l.s.leaseGens(l.info.Account)
	if err != nil {
		return
	}
	for _, g := range gens {
		if g < l.info.Gen {
			_ = os.Remove(l.s.leasePath(l.info.Account, g))
		}
	}
}

// Info is the lease as last written.
func (l *AccountLease) Info() LeaseInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.info
}

// check reports ErrLeaseLost when a higher generation exists or ours is
// no longer ours.
func (l *AccountLease) check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, top, err := l.s.leaseGens(l.info.Account)
	if err != nil {
		return fmt.Errorf("account lease: %w", err)
	}
	if top != l.info.Gen {
		return fmt.Errorf("%w: %s is at generation %d, ours was %d", ErrLeaseLost, l.info.Account, top, l.info.Gen)
	}
	cur, ok := l.s.readLease(l.info.Account, l.info.Gen)
	if !ok || cur.Token != l.info.Token || cur.Released {
		return fmt.Errorf("%w: %s generation %d is no longer ours", ErrLeaseLost, l.info.Account, l.info.Gen)
	}
	return nil
}

// Renew rewrites the lease's renewal time after checking it is still ours;
// the web lane calls it with every heartbeat and before every task.
func (l *AccountLease) Renew(now time.Time) error {
	if err := l.check(); err != nil {
		return err
	}
	i := l.Info()
	i.Renewed = now
	if err := l.s.files.writeAtomic(l.s.leasePath(i.Account, i.Gen), i.encode()); err != nil {
		return fmt.Errorf("account lease: %w", err)
	}
	l.mu.Lock()
	l.info = i
	l.mu.Unlock()
	return nil
}

// Release marks the lease released, so another host may take the account
// at once; a lease already lost is left alone.
func (l *AccountLease) Release(now time.Time) error {
	if err := l.check(); err != nil {
		return nil
	}
	i := l.Info()
	i.Renewed, i.Released = now, true
	return l.s.files.writeAtomic(l.s.leasePath(i.Account, i.Gen), i.encode())
}
