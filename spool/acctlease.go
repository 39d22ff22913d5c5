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
	ents, err := ReadDir(s.Layout.Accounts())
	if err != nil {
		return leaseView{}, err
	}
	v := leaseView{names: map[string]bool{}}
	for _, e := range ents {
		a, rest, ok := leaseAccount(e.Name())
		if !ok || a != account || IsOwnTemp(e.Name()) {
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
	names, err := ReadDirNames(dir)
	if err != nil {
		return LeaseInfo{}, false
	}
	stale := s.Cfg.Timing().StaleAfter
	for _, n := range names {
		if !taskfile.IsTaskFileName(n) || IsOwnTemp(n) {
			continue
		}
		id := taskfile.TrimTaskExt(n)
		data, _, err := ReadOwn(filepath.Join(dir, n), taskfile.MaxRecordSize)
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
		if h, pid := ParseOwner(sum.Owner); h == s.Cfg.Host && pid > 0 && ProcessGone(pid) {
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
	ents, _ := ReadDirNames(l.s.Layout.Accounts())
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
