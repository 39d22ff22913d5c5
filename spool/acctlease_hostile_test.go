//go:build unix

package spool

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/fsx"
	"github.com/spoolgate/spoolgate/internal/seal"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestAccountLease_Hostile: files a colleague may leave in accounts/, and
// what each must not do: wedge the account for longer than staleAfter,
// overflow the generation, or let a second owner in.
func TestAccountLease_Hostile(t *testing.T) {
	future := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, s *Store) // the hostile file(s)
		// blocks: a fresh foreign file, which binds for staleAfter (from
		// when first seen) and no longer.
		blocks bool
	}{
		{"generation at MaxInt64 (overflow)", func(t *testing.T, s *Store) {
			write(t, filepath.Join(s.Layout.Accounts(), "a1.lease.9223372036854775807"), "owner: x:1\nrenewed: 2099-01-01T00:00:00Z\n")
		}, false},
		{"generation past the bound", func(t *testing.T, s *Store) {
			write(t, filepath.Join(s.Layout.Accounts(), "a1.lease.1125899906842624"), "x")
		}, false},
		{"unsealed lease renewed in 2099", func(t *testing.T, s *Store) {
			write(t, s.leasePath("a1", 7), "owner: evil:1\ntoken: ab\nsince: 2099-01-01T00:00:00Z\nrenewed: 2099-01-01T00:00:00Z\n")
			os.Chtimes(s.leasePath("a1", 7), future, future)
		}, true},
		{"empty file with mtime in 2099", func(t *testing.T, s *Store) {
			write(t, s.leasePath("a1", 3), "")
			os.Chtimes(s.leasePath("a1", 3), future, future)
		}, true},
		{"fifo with mtime in 2099", func(t *testing.T, s *Store) {
			if err := syscall.Mkfifo(s.leasePath("a1", 4), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(s.leasePath("a1", 4), future, future)
		}, true},
		{"another installation's sealed lease", func(t *testing.T, s *Store) {
			o2 := &Store{Layout: s.Layout, Cfg: s.Cfg, Seal: newOtherKey()}
			data, _ := o2.SealFor(SealLease, s.leasePath("a1", 2), LeaseInfo{Owner: "x:1", Renewed: future}.encode())
			write(t, s.leasePath("a1", 2), string(data))
		}, true},
		{"leading zero and sign", func(t *testing.T, s *Store) {
			write(t, filepath.Join(s.Layout.Accounts(), "a1.lease.05"), "")
			write(t, filepath.Join(s.Layout.Accounts(), "a1.lease.+6"), "")
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
			os.MkdirAll(s.Layout.Accounts(), 0o750)
			tc.plant(t, s)
			stale := s.Cfg.Timing().StaleAfter
			now := time.Now()
			before := names(t, s.Layout.Accounts())
			l, err := s.AcquireAccount("a1", "h1:1", now)
			if tc.blocks {
				var le *LeasedError
				if !errors.As(err, &le) || le.Info.Foreign == "" {
					t.Fatalf("fresh foreign file: %v, want blocked by it", err)
				}
				if info, ok := s.AccountLeaseInfo("a1"); !ok || info.Foreign == "" {
					t.Errorf("status view: %+v %v, want the foreign file named", info, ok)
				}
				// Past staleAfter from first sight it binds no more.
				l, err = s.AcquireAccount("a1", "h1:1", now.Add(stale+time.Millisecond))
			}
			if err != nil {
				t.Fatalf("acquire: %v", err)
			}
			g := l.Info().Gen
			if g <= 0 || g > maxLeaseGen {
				t.Fatalf("generation %d out of bounds", g)
			}
			// The holder keeps it: no check finds it lost one heartbeat later.
			if err := l.Renew(time.Now()); err != nil {
				t.Fatalf("renew right after taking: %v", err)
			}
			if _, err := s.AcquireAccount("a1", "h2:2", time.Now()); !errors.Is(err, ErrAccountLeased) {
				t.Fatalf("second owner: %v, want leased", err)
			}
			// Foreign files are never deleted.
			after := names(t, s.Layout.Accounts())
			for n := range before {
				if !after[n] {
					t.Errorf("foreign file %s was deleted", n)
				}
			}
			if len(s.CheckForeign()) == 0 {
				t.Errorf("no foreign file listed")
			}
		})
	}
}

// TestAccountLease_RenamedOrDeletedMidTask: a colleague renames or deletes
// the live lease file while the holder runs a task: no second owner gets
// the account (the running task witnesses it), and the holder keeps it.
func TestAccountLease_RenamedOrDeletedMidTask(t *testing.T) {
	for _, how := range []string{"rename", "delete"} {
		t.Run(how, func(t *testing.T) {
			s := newTestStore(t)
			now := time.Now()
			a, err := s.AcquireAccount("a1", "h1:1", now)
			if err != nil {
				t.Fatal(err)
			}
			// h1's running task of a1, heartbeat fresh.
			tk := &taskfile.Task{TaskID: "t1", Model: "chat", State: taskfile.StateRunning, Owner: "h1:1", Account: "a1", Attempt: 1, StartedAt: now, HeartbeatAt: now}
			data, _ := tk.Encode()
			write(t, s.Layout.TaskPath(taskfile.KindWeb, taskfile.DirRunning, "t1"), string(data))
			p := s.leasePath("a1", a.Info().Gen)
			if how == "rename" {
				os.Rename(p, p+".bak")
			} else {
				os.Remove(p)
			}
			_, err = s.AcquireAccount("a1", "h2:2", now.Add(10*time.Millisecond))
			var le *LeasedError
			if !errors.As(err, &le) || le.Info.Task != "web/t1" {
				t.Fatalf("second host with the lease file gone: %v, want refused by the running task", err)
			}
			if err := a.Renew(now.Add(20 * time.Millisecond)); err != nil {
				t.Fatalf("holder after its file was %sd: %v", how, err)
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("holder did not write its lease again: %v", err)
			}
			// A stale task witnesses nothing.
			if _, ok := s.AccountInUse("a1", "h2:2", now.Add(s.Cfg.Timing().StaleAfter+time.Second)); ok {
				t.Errorf("a stale task still witnesses the account")
			}
		})
	}
}

// TestAccountLease_ForeignAboveHolder: a higher foreign generation does
// not take the account from its holder.
func TestAccountLease_ForeignAboveHolder(t *testing.T) {
	s := newTestStore(t)
	now := time.Now()
	a, err := s.AcquireAccount("a1", "h1:1", now)
	if err != nil {
		t.Fatal(err)
	}
	write(t, s.leasePath("a1", a.Info().Gen+1), "owner: evil:1\nrenewed: 2099-01-01T00:00:00Z\n")
	if err := a.Renew(now.Add(time.Millisecond)); err != nil {
		t.Fatalf("holder with a foreign file above: %v", err)
	}
}

func TestStore_ClearAccountLease(t *testing.T) {
	s := newTestStore(t)
	os.MkdirAll(s.Layout.Accounts(), 0o750)
	future := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	write(t, s.leasePath("a1", 9), "")
	os.Chtimes(s.leasePath("a1", 9), future, future)
	if _, err := s.AcquireAccount("a1", "h1:1", time.Now()); !errors.Is(err, ErrAccountLeased) {
		t.Fatalf("before clearing: %v", err)
	}
	was, held, err := s.ClearAccountLease("a1", time.Now())
	if err != nil || !held || was.Foreign == "" {
		t.Fatalf("clear: %+v %v %v", was, held, err)
	}
	if _, err := s.AcquireAccount("a1", "h1:1", time.Now()); err != nil {
		t.Fatalf("after clearing: %v", err)
	}
	if _, err := os.Lstat(s.leasePath("a1", 9)); err != nil {
		t.Errorf("the foreign file was removed: %v", err)
	}
}

func write(t *testing.T, p, data string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o750)
	if err := os.WriteFile(p, []byte(data), 0o640); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, dir string) map[string]bool {
	out := map[string]bool{}
	ns, _ := fsx.ReadDirNames(dir)
	for _, n := range ns {
		out[n] = true
	}
	return out
}

func newOtherKey() *seal.Key { return seal.New() }
