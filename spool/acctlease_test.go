package spool

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"
)

func TestAccountLease_AcquireRenewRelease(t *testing.T) {
	s := newTestStore(t)
	stale := s.Cfg.Timing().StaleAfter
	t0 := time.Now()
	a, err := s.AcquireAccount("a1", "h1:1", t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AcquireAccount("a1", "h2:2", t0.Add(time.Second)); !errors.Is(err, ErrAccountLeased) {
		t.Fatalf("second owner: %v, want ErrAccountLeased", err)
	}
	var le *LeasedError
	if _, err := s.AcquireAccount("a1", "h2:2", t0); !errors.As(err, &le) || le.Info.Owner != "h1:1" {
		t.Fatalf("leased error: %v", err)
	}
	// The holder acquiring again renews the same generation.
	again, err := s.AcquireAccount("a1", "h1:1", t0.Add(2*time.Second))
	if err != nil || again.Info().Gen != a.Info().Gen {
		t.Fatalf("re-acquire by holder: %+v %v", again, err)
	}
	if err := a.Renew(t0.Add(3 * time.Second)); err != nil {
		t.Fatal(err)
	}
	info, ok := s.AccountLeaseInfo("a1")
	if !ok || info.Owner != "h1:1" || !info.Renewed.After(t0) {
		t.Fatalf("info: %+v %v", info, ok)
	}
	// Past staleAfter since the last renewal, another host takes over;
	// the old holder finds out at its next renewal.
	b, err := s.AcquireAccount("a1", "h2:2", t0.Add(3*time.Second+stale+time.Millisecond*10))
	if err != nil {
		t.Fatalf("takeover of a stale lease: %v", err)
	}
	if b.Info().Gen != a.Info().Gen+1 {
		t.Fatalf("takeover gen %d after %d", b.Info().Gen, a.Info().Gen)
	}
	if err := a.Renew(t0.Add(4 * time.Second)); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("old holder renew: %v, want ErrLeaseLost", err)
	}
	// A release lets the next owner in at once.
	if err := b.Release(t0.Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AcquireAccount("a1", "h1:1", t0.Add(6*time.Second)); err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	v, _ := s.leaseView("a1")
	if len(v.names) != 1 {
		t.Fatalf("older generations left: %v", v.names)
	}
}

func TestAccountLease_OneWinnerOfMany(t *testing.T) {
	s := newTestStore(t)
	now := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.AcquireAccount("a1", "h:"+string(rune('a'+i)), now)
			if err == nil {
				mu.Lock()
				won++
				mu.Unlock()
			} else if !errors.Is(err, ErrAccountLeased) {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d owners won one account's lease", won)
	}
}

func TestAccountLease_Unreadable(t *testing.T) {
	s := newTestStore(t)
	if err := os.WriteFile(s.leasePath("a1", 3), []byte("garbage: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	info, ok := s.AccountLeaseInfo("a1")
	if !ok || info.Foreign != "accounts/a1.lease.3" || info.Gen != 3 {
		t.Fatalf("unreadable lease: %+v %v", info, ok)
	}
	// Fresh by its mtime: it binds until staleAfter.
	if _, err := s.AcquireAccount("a1", "h:1", time.Now()); !errors.Is(err, ErrAccountLeased) {
		t.Fatalf("acquire over a fresh unreadable lease: %v", err)
	}
	if _, err := s.AcquireAccount("a1", "h:1", time.Now().Add(s.Cfg.Timing().StaleAfter+time.Second)); err != nil {
		t.Fatalf("acquire over a stale unreadable lease: %v", err)
	}
}

func FuzzDecodeLease(f *testing.F) {
	f.Add([]byte("owner: h:1\ntoken: ab\nsince: 2026-01-01T00:00:00Z\nrenewed: 2026-01-01T00:00:01Z\n"))
	f.Add([]byte("owner: h:1\nrenewed: 2026-01-01T00:00:01Z\nreleased: true\n"))
	f.Add([]byte("owner: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		i, err := DecodeLease(data)
		if err != nil {
			return
		}
		j, err := DecodeLease(i.encode())
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if j.Owner != i.Owner || j.Released != i.Released || j.Token != i.Token {
			t.Fatalf("round trip: %+v != %+v", j, i)
		}
	})
}

// FuzzParseGen: a lease file's name is anyone's to choose; a generation
// read from it is always within bounds, and the next one never overflows.
func FuzzParseGen(f *testing.F) {
	for _, s := range []string{"1", "9223372036854775807", "1125899906842624", "05", "+6", "-1", "", "12a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, ok := parseGen(s)
		if !ok {
			return
		}
		if g < 1 || g > maxLeaseGen || g+1 <= g {
			t.Fatalf("parseGen(%q) = %d", s, g)
		}
	})
}
