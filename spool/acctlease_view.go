// This file holds the reading side of account leases: an account's lease
// files at one look (leaseView), which of them binds others now, and who
// holds an account (AccountLeaseInfo, AccountInUse, the second witness).

package spool

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// leaseFile is one of an account's lease files as listed.
type leaseFile struct {
	name string
	gen  int64 // 0: the name holds no generation within bounds
	info LeaseInfo
	err  error     // not nil: foreign (why)
	mod  time.Time // its mtime (foreign files are timed by it)
}

// leaseView is an account's lease files at one look.
type leaseView struct {
	top     *leaseFile // the highest sealed generation, nil if none
	foreign []leaseFile
	names   map[string]bool
	maxGen  int64 // the highest generation that counts towards the next
}

func (s *Store) leasePath(account string, gen int64) string {
	return filepath.Join(s.Layout.Accounts(), account+LeaseExt+strconv.FormatInt(gen, 10))
}

// readLeaseFile reads and checks one lease file of account.
func (s *Store) readLeaseFile(account, name string) (LeaseInfo, error) {
	p := filepath.Join(s.Layout.Accounts(), name)
	_, rest, _ := leaseAccount(name)
	gen, ok := parseGen(rest)
	if !ok {
		return LeaseInfo{}, s.foreign(SealLease, p, fmt.Errorf("%q is not a generation from 1 to %d", rest, int64(maxLeaseGen)))
	}
	body, _, err := s.ReadSealed(SealLease, p, maxLeaseSize+256)
	if err != nil {
		return LeaseInfo{}, err
	}
	i, err := DecodeLease(body)
	if err != nil {
		return LeaseInfo{}, s.foreign(SealLease, p, err)
	}
	i.Account, i.Gen = account, gen
	return i, nil
}

// leaseView lists and reads account's lease files.
func (s *Store) leaseView(account string) (leaseView, error) {
	ents, err := fsx.ReadDir(s.Layout.Accounts())
	if err != nil {
		return leaseView{}, err
	}
	v := leaseView{names: map[string]bool{}}
	for _, e := range ents {
		a, rest, ok := leaseAccount(e.Name())
		if !ok || a != account || fsx.IsOwnTemp(e.Name()) {
			continue
		}
		v.names[e.Name()] = true
		f := leaseFile{name: e.Name()}
		f.gen, _ = parseGen(rest)
		if fi, err := e.Info(); err == nil {
			f.mod = fi.ModTime()
		}
		f.info, f.err = s.readLeaseFile(account, e.Name())
		switch {
		case f.err == nil:
			v.maxGen = max(v.maxGen, f.gen)
			if v.top == nil || f.gen > v.top.gen {
				v.top = &f
			}
		default:
			if f.gen > 0 && f.gen <= maxForeignGen {
				v.maxGen = max(v.maxGen, f.gen)
			}
			v.foreign = append(v.foreign, f)
		}
	}
	return v, nil
}

// next is the generation to create: above every one that counts, and a
// name nobody uses.
func (v leaseView) next(account string) int64 {
	g := v.maxGen + 1
	for v.names[account+LeaseExt+strconv.FormatInt(g, 10)] {
		g++
	}
	return g
}

// live reports whether the sealed lease i binds others at now; a renewal
// in the future counts from when this store first saw it.
func (s *Store) live(i LeaseInfo, now time.Time, staleAfter time.Duration) (LeaseInfo, bool) {
	i.Renewed, _ = s.clampFuture(SealLease, s.leasePath(i.Account, i.Gen), i.Renewed, now)
	return i, i.Live(now, staleAfter)
}

// blocker is the fresh foreign lease file above the sealed top that binds
// others now, if any: for staleAfter from its mtime (or from when first
// seen, for an mtime in the future), like a lease nobody renews.
func (s *Store) blocker(account string, v leaseView, now time.Time, staleAfter time.Duration) (LeaseInfo, bool) {
	for _, f := range v.foreign {
		if f.gen == 0 || f.gen > maxForeignGen || (v.top != nil && f.gen < v.top.gen) {
			continue // no generation, or below the lease: binds nobody
		}
		p := filepath.Join(s.Layout.Accounts(), f.name)
		at, _ := s.clampFuture(SealLease, p, f.mod, now)
		if now.Sub(at) <= staleAfter {
			return LeaseInfo{Account: account, Gen: f.gen, Renewed: at, Foreign: s.rel(p)}, true
		}
	}
	return LeaseInfo{}, false
}

// AccountLeaseInfo is the account's lease as status shows it: the live
// sealed lease (Owner), or the foreign file that blocks it (Foreign), or
// another owner's running task of the account (Task). ok is false when
// nothing holds it.
func (s *Store) AccountLeaseInfo(account string) (LeaseInfo, bool) {
	return s.AccountLeaseAt(account, time.Now())
}

// AccountLeaseAt is AccountLeaseInfo at now (status's clock).
func (s *Store) AccountLeaseAt(account string, now time.Time) (LeaseInfo, bool) {
	if !taskfile.ValidTaskID(account) {
		return LeaseInfo{}, false
	}
	stale := s.Cfg.Timing().StaleAfter
	v, err := s.leaseView(account)
	if err != nil {
		return LeaseInfo{}, false
	}
	if v.top != nil {
		if i, ok := s.live(v.top.info, now, stale); ok {
			return i, true
		}
	}
	if b, ok := s.blocker(account, v, now, stale); ok {
		return b, true
	}
	return LeaseInfo{}, false
}

// AccountInUse reports another owner's running task of account whose
// heartbeat is fresh: the second witness of who drives the account, which
// no lease file can hide. A task of a process of this host that is gone
// does not count (recovery reclaims it).
func (s *Store) AccountInUse(account, owner string, now time.Time) (LeaseInfo, bool) {
	dir := s.Layout.Lane(taskfile.KindWeb, taskfile.DirRunning)
	names, err := fsx.ReadDirNames(dir)
	if err != nil {
		return LeaseInfo{}, false
	}
	stale := s.Cfg.Timing().StaleAfter
	for _, n := range names {
		if !taskfile.IsTaskFileName(n) || fsx.IsOwnTemp(n) {
			continue
		}
		id := taskfile.TrimTaskExt(n)
		data, _, err := fsx.ReadOwn(filepath.Join(dir, n), taskfile.MaxRecordSize)
		if err != nil {
			continue
		}
		sum, ok := taskfile.ScanSummary(data)
		if !ok {
			t, err := taskfile.DecodeRecord(data)
			if err != nil {
				continue
			}
			sum = taskfile.SummaryOf(t)
		}
		if sum.Account != account || sum.Owner == "" || sum.Owner == owner {
			continue
		}
		if h, pid := ParseOwner(sum.Owner); h == s.Cfg.Host && pid > 0 && fsx.ProcessGone(pid) {
			continue
		}
		hb := sum.HeartbeatAt
		hb, _ = s.clampFuture("task", filepath.Join(dir, n), hb, now)
		if now.Sub(hb) <= stale {
			return LeaseInfo{Account: account, Owner: sum.Owner, Renewed: hb, Task: string(taskfile.KindWeb) + "/" + id}, true
		}
	}
	return LeaseInfo{}, false
}
