// This file holds the taking and holding of an account lease: a host
// takes one (AcquireAccount), the operator clears one (ClearAccountLease),
// and the holder renews, checks and releases its own (AccountLease).

package spool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// AcquireAccount takes account's lease for owner, or renews it if owner
// holds it already. It returns a *LeasedError (matching ErrAccountLeased)
// while another owner holds a live one, a fresh foreign file blocks it,
// or another owner's running task of the account has a fresh heartbeat.
func (s *Store) AcquireAccount(account, owner string, now time.Time) (*AccountLease, error) {
	if !taskfile.ValidTaskID(account) {
		return nil, fmt.Errorf("account lease: %q cannot name a file", account)
	}
	staleAfter := s.Cfg.Timing().StaleAfter
	for range 3 {
		v, err := s.leaseView(account)
		if err != nil {
			return nil, fmt.Errorf("account lease: %w", err)
		}
		if v.top != nil {
			if cur, live := s.live(v.top.info, now, staleAfter); live {
				if cur.Owner != owner {
					return nil, &LeasedError{Account: account, Info: cur}
				}
				l := &AccountLease{s: s, info: v.top.info}
				return l, l.Renew(now)
			}
		}
		if b, ok := s.blocker(account, v, now, staleAfter); ok {
			return nil, &LeasedError{Account: account, Info: b}
		}
		if w, ok := s.AccountInUse(account, owner, now); ok {
			return nil, &LeasedError{Account: account, Info: w}
		}
		gen := v.next(account)
		if gen > maxLeaseGen {
			return nil, fmt.Errorf("account lease %s: generations exhausted (%d)", account, gen)
		}
		tok := make([]byte, 8)
		_, _ = rand.Read(tok)
		info := LeaseInfo{Account: account, Gen: gen, Owner: owner, Token: hex.EncodeToString(tok), Since: now, Renewed: now}
		err = s.WriteSealedNew(SealLease, s.leasePath(account, gen), info.encode())
		if errors.Is(err, fsx.ErrExists) || errors.Is(err, fs.ErrExist) {
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

// ClearAccountLease is the operator's way out of a stuck lease (`spoolgate
// resume --account`): it writes a released generation above every lease
// file of the account, so none of them binds any more. Foreign files are
// left where they are (status lists them). It returns what held the
// account before, if anything.
func (s *Store) ClearAccountLease(account string, now time.Time) (was LeaseInfo, held bool, err error) {
	if !taskfile.ValidTaskID(account) {
		return LeaseInfo{}, false, fmt.Errorf("account %q cannot name a file", account)
	}
	was, held = s.AccountLeaseAt(account, now)
	v, err := s.leaseView(account)
	if err != nil {
		return was, held, err
	}
	if len(v.names) == 0 {
		return was, held, nil
	}
	info := LeaseInfo{Account: account, Gen: v.next(account), Owner: "operator:" + strconv.Itoa(os.Getpid()), Since: now, Renewed: now, Released: true}
	if err := s.WriteSealedNew(SealLease, s.leasePath(account, info.Gen), info.encode()); err != nil {
		return was, held, fmt.Errorf("clear account lease: %w", err)
	}
	(&AccountLease{s: s, info: info}).sweep()
	return was, held, nil
}

// AccountLease is a lease this process holds.
type AccountLease struct {
	s    *Store
	mu   sync.Mutex // guards info: a lane reads it while a runner renews
	info LeaseInfo
}

// sweep removes the sealed generations below ours: they bind nobody.
// Foreign files are never deleted.
func (l *AccountLease) sweep() {
	v, err := l.s.leaseView(l.info.Account)
	if err != nil {
		return
	}
	if v.top == nil {
		return
	}
	ents, _ := fsx.ReadDirNames(l.s.Layout.Accounts())
	for _, n := range ents {
		a, rest, ok := leaseAccount(n)
		g, gok := parseGen(rest)
		if !ok || a != l.info.Account || !gok || g >= l.info.Gen {
			continue
		}
		if _, err := l.s.readLeaseFile(a, n); err == nil {
			_ = os.Remove(filepath.Join(l.s.Layout.Accounts(), n))
		}
	}
}

// Info is the lease as last written.
func (l *AccountLease) Info() LeaseInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.info
}

// check reports ErrLeaseLost when a higher sealed generation exists or
// ours was rewritten by another daemon. A foreign file changes nothing: a
// higher foreign generation is ignored, and if ours was removed, renamed
// or replaced by a foreign file, ours is written again (at the next free
// generation when the name is taken), unless another live sealed lease
// exists by then. It returns the lease as it now stands.
func (l *AccountLease) check(now time.Time) (LeaseInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := l.info
	v, err := l.s.leaseView(i.Account)
	if err != nil {
		return i, fmt.Errorf("account lease: %w", err)
	}
	if v.top != nil && v.top.gen > i.Gen {
		return i, fmt.Errorf("%w: %s is at generation %d, ours was %d", ErrLeaseLost, i.Account, v.top.gen, i.Gen)
	}
	if v.top != nil && v.top.gen == i.Gen {
		if cur := v.top.info; cur.Token != i.Token || cur.Released {
			return i, fmt.Errorf("%w: %s generation %d is no longer ours", ErrLeaseLost, i.Account, i.Gen)
		}
		return i, nil
	}
	// Ours is gone or foreign now. Another live sealed lease, even of a
	// lower generation, means someone took the account meanwhile.
	stale := l.s.Cfg.Timing().StaleAfter
	if v.top != nil {
		if _, live := l.s.live(v.top.info, now, stale); live {
			return i, fmt.Errorf("%w: our generation %d of %s is gone and %s holds generation %d", ErrLeaseLost, i.Gen, i.Account, v.top.info.Owner, v.top.gen)
		}
	}
	gen := i.Gen
	if v.names[i.Account+LeaseExt+strconv.FormatInt(gen, 10)] {
		gen = v.next(i.Account)
	}
	n := i
	n.Gen, n.Renewed = gen, now
	err = l.s.WriteSealedNew(SealLease, l.s.leasePath(i.Account, gen), n.encode())
	if err != nil {
		return i, fmt.Errorf("%w: rewriting our lease of %s, whose file was removed or replaced: %v", ErrLeaseLost, i.Account, err)
	}
	l.s.Log.Warn("account lease file removed, renamed or replaced by a foreign file: written again", "account", i.Account, "gen", gen, "was", i.Gen)
	l.info = n
	return n, nil
}

// Renew rewrites the lease's renewal time after checking it is still ours;
// the web lane calls it with every heartbeat and before every task.
func (l *AccountLease) Renew(now time.Time) error {
	i, err := l.check(now)
	if err != nil {
		return err
	}
	i.Renewed = now
	if err := l.s.WriteSealedAtomic(SealLease, l.s.leasePath(i.Account, i.Gen), i.encode()); err != nil {
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
	i, err := l.check(now)
	if err != nil {
		return nil
	}
	i.Renewed, i.Released = now, true
	return l.s.WriteSealedAtomic(SealLease, l.s.leasePath(i.Account, i.Gen), i.encode())
}
