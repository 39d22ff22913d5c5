package spool

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/seal"
	"github.com/spoolgate/spoolgate/spool/config"
)

// auditFixture is a store with n chained lines in December 2026's file
// (users u1..un, task api/tN), and the file's lines.
func auditFixture(t *testing.T, n int) (*Store, string, []string) {
	t.Helper()
	s := NewStore(&config.Config{Spool: t.TempDir()}, nil)
	s.Seal = seal.New()
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		if err := s.AppendAudit(AuditEntry{Time: now.Add(time.Duration(i) * time.Minute), User: fmt.Sprintf("u%d", i),
			Door: DoorConsole, Action: "cancel", Tasks: []string{fmt.Sprintf("api/t%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(s.Layout.Root, AuditDir, "2026-12.log")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	return s, file, lines[:len(lines)-1] // each with its newline
}

// oldAuditLine is a line as a spoolgate before the chain sealed it.
func oldAuditLine(t *testing.T, s *Store, name string, e AuditEntry) string {
	t.Helper()
	js, err := json.Marshal(map[string]any{"time": e.Time, "user": e.User, "remote": "", "action": e.Action, "tasks": e.Tasks})
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := s.key().Seal(SealAudit, name, append(js, '\n'))
	if err != nil {
		t.Fatal(err)
	}
	return string(js) + "\t" + string(sealed[len(js)+1:])
}

// breaksOf is the verify report's breaks as "line:seq", and the page's
// entries as users ("#" for a break, "~" prefix before the chain).
func breaksOf(rep AuditReport) string {
	var out []string
	for _, b := range rep.Breaks {
		out = append(out, fmt.Sprintf("%d:%d", b.Line, b.Entry.Seq))
	}
	return strings.Join(out, " ")
}

func pageOf(es []AuditEntry) string {
	var out []string
	for _, e := range es {
		switch {
		case e.Break != "":
			out = append(out, "#")
		case e.Foreign != "":
			out = append(out, "!"+e.User)
		case e.Unchained:
			out = append(out, "~"+e.User)
		default:
			out = append(out, e.User)
		}
	}
	return strings.Join(out, " ")
}

func TestStore_VerifyAudit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(t *testing.T, s *Store, lines []string) string // the file's new content
		after int                                                 // lines appended after the edit
		// breaks: verify's "line:seq" of each break; page: what the
		// page shows of every line, in file order.
		breaks, page string
		foreign      int
	}{
		{name: "intact", edit: func(_ *testing.T, _ *Store, l []string) string { return strings.Join(l, "") },
			page: "u1 u2 u3 u4 u5"},
		{name: "a line deleted", edit: func(_ *testing.T, _ *Store, l []string) string {
			return strings.Join(slices.Delete(slices.Clone(l), 2, 3), "")
		}, breaks: "3:4", page: "u1 u2 # u4 u5"},
		{name: "the first line deleted", edit: func(_ *testing.T, _ *Store, l []string) string { return strings.Join(l[1:], "") },
			breaks: "1:2", page: "# u2 u3 u4 u5"},
		{name: "a line duplicated", edit: func(_ *testing.T, _ *Store, l []string) string {
			return strings.Join(slices.Insert(slices.Clone(l), 4, l[1]), "")
		}, breaks: "5:2", page: "u1 u2 u3 u4 # u2 u5"},
		{name: "two lines swapped", edit: func(_ *testing.T, _ *Store, l []string) string {
			m := slices.Clone(l)
			m[2], m[3] = m[3], m[2]
			return strings.Join(m, "")
		}, breaks: "3:4 4:3 5:5", page: "u1 u2 # u4 # u3 # u5"},
		{name: "a line edited", edit: func(_ *testing.T, _ *Store, l []string) string {
			m := slices.Clone(l)
			m[1] = strings.Replace(m[1], `"u2"`, `"boss"`, 1)
			return strings.Join(m, "")
		}, breaks: "3:3", page: "u1 !boss # u3 u4 u5", foreign: 1},
		{name: "5 MiB of junk lines and a 5 MiB line after the lines, and lines after it", edit: func(_ *testing.T, _ *Store, l []string) string {
			junk := strings.Repeat(strings.Repeat("x", 1000)+"\n", 5<<10) + strings.Repeat("y", 5<<20) // lines, and one over-long line without its end
			return strings.Join(l, "") + junk
		}, after: 2, page: "u1 u2 u3 u4 u5 a1 a2", foreign: 5<<10 + 1},
		{name: "old lines before the chain", edit: func(t *testing.T, s *Store, l []string) string {
			old := ""
			for i := range 2 {
				old += oldAuditLine(t, s, "2026-12.log", AuditEntry{Time: time.Date(2026, 12, 1, 9, i, 0, 0, time.UTC), User: fmt.Sprintf("o%d", i), Action: "cancel"}) + "\n"
			}
			return old
		}, after: 2, page: "~o0 ~o1 a1 a2"},
		{name: "an older spoolgate's line among chained ones", edit: func(t *testing.T, s *Store, l []string) string {
			old := oldAuditLine(t, s, "2026-12.log", AuditEntry{Time: time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC), User: "o", Action: "cancel"}) + "\n"
			return strings.Join(l, "") + old
		}, after: 1, breaks: "", page: "u1 u2 u3 u4 u5 ~o a1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, file, lines := auditFixture(t, 5)
			if err := os.WriteFile(file, []byte(tc.edit(t, s, lines)), 0o600); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= tc.after; i++ {
				if err := s.AppendAudit(AuditEntry{Time: time.Date(2026, 12, 5, 0, i, 0, 0, time.UTC), User: fmt.Sprintf("a%d", i), Action: "retry"}); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := s.VerifyAudit(file)
			if err != nil {
				t.Fatal(err)
			}
			if got := breaksOf(rep); got != tc.breaks {
				t.Errorf("verify: breaks %q, want %q (%+v)", got, tc.breaks, rep.Breaks)
			}
			if rep.Foreign != tc.foreign {
				t.Errorf("verify: %d foreign lines, want %d", rep.Foreign, tc.foreign)
			}
			es, err := s.Audit(time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC), func(AuditEntry) bool { return true })
			if err != nil {
				t.Fatal(err)
			}
			if got := pageOf(es); got != tc.page {
				t.Errorf("page: %q, want %q", got, tc.page)
			}
		})
	}
}

// TestStore_AuditOf_breaks: a task's page shows a break in the chain at
// its place even when the missing line was another task's.
func TestStore_AuditOf_breaks(t *testing.T) {
	s, file, lines := auditFixture(t, 5)
	if err := os.WriteFile(file, []byte(strings.Join(slices.Delete(slices.Clone(lines), 2, 3), "")), 0o600); err != nil {
		t.Fatal(err)
	}
	es, err := s.AuditOf(time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC), "api/t4", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := pageOf(es); got != "# u4" {
		t.Errorf("task t4's page: %q, want %q", got, "# u4")
	}
	if es[0].File != "2026-12.log" || !strings.Contains(es[0].Break, "1 line(s) missing (or moved) between seq 2 and seq 4") {
		t.Errorf("the break: %+v", es[0])
	}
}

// TestStore_AppendAudit_junkWithoutNewline: a line planted without its
// newline does not swallow the next sealed line.
func TestStore_AppendAudit_junkWithoutNewline(t *testing.T) {
	s, file, _ := auditFixture(t, 2)
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"user":"boss","action":"cancel"}`)
	f.Close()
	if err := s.AppendAudit(AuditEntry{Time: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC), User: "a1", Action: "retry"}); err != nil {
		t.Fatal(err)
	}
	rep, err := s.VerifyAudit(file)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sealed != 3 || len(rep.Breaks) != 0 || rep.Foreign != 1 {
		t.Errorf("sealed %d, breaks %v, foreign %d; want 3, none, 1", rep.Sealed, rep.Breaks, rep.Foreign)
	}
}

// TestStore_AppendAudit_concurrent: appenders at once, as goroutines of
// one process (two Stores) and as processes (another host's daemon, a
// command-line call), keep one unbroken chain.
func TestStore_AppendAudit_concurrent(t *testing.T) {
	const n = 150
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	key, err := seal.FromBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		procs int // writer processes, besides the goroutines
	}{
		{"goroutines", 0},
		{"processes", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for w := range 2 {
				s := NewStore(&config.Config{Spool: root}, nil)
				s.Seal = key
				wg.Go(func() {
					for i := range n {
						if err := s.AppendAudit(AuditEntry{Time: time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC), User: fmt.Sprintf("g%d-%d", w, i), Action: "cancel"}); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			for p := range tc.procs {
				wg.Go(func() {
					cmd := exec.Command(os.Args[0], "-test.run=^TestAuditHelperProcess$")
					cmd.Env = append(os.Environ(), "SPOOLGATE_AUDIT_HELPER="+strings.Join([]string{root, hex.EncodeToString(raw), strconv.Itoa(n), "p" + strconv.Itoa(p)}, ","))
					if out, err := cmd.CombinedOutput(); err != nil {
						errs <- fmt.Errorf("writer process: %w: %s", err, out)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			s := NewStore(&config.Config{Spool: root}, nil)
			s.Seal = key
			rep, err := s.VerifyAudit(filepath.Join(root, AuditDir, "2026-12.log"))
			if err != nil {
				t.Fatal(err)
			}
			want := (2 + tc.procs) * n
			if rep.Sealed != want || len(rep.Breaks) != 0 || rep.Foreign != 0 {
				t.Errorf("sealed %d of %d, %d breaks (first %+v), %d foreign", rep.Sealed, want, len(rep.Breaks), first(rep.Breaks), rep.Foreign)
			}
		})
	}
}

func first(fs []AuditFinding) AuditFinding {
	if len(fs) == 0 {
		return AuditFinding{}
	}
	return fs[0]
}

// TestAuditHelperProcess is a writer process of
// TestStore_AppendAudit_concurrent; it does nothing in a normal run.
func TestAuditHelperProcess(t *testing.T) {
	arg := os.Getenv("SPOOLGATE_AUDIT_HELPER")
	if arg == "" {
		t.Skip("a helper process of TestStore_AppendAudit_concurrent")
	}
	f := strings.Split(arg, ",")
	raw, _ := hex.DecodeString(f[1])
	key, err := seal.FromBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(f[2])
	s := NewStore(&config.Config{Spool: f[0]}, nil)
	s.Seal = key
	for i := range n {
		if err := s.AppendAudit(AuditEntry{Time: time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC), User: fmt.Sprintf("%s-%d", f[3], i), Action: "retry"}); err != nil {
			t.Fatal(err)
		}
	}
}
