package spool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/internal/seal"
	"github.com/spoolgate/spoolgate/spool/config"
)

func TestStore_AppendAudit(t *testing.T) {
	cfg := &config.Config{Spool: t.TempDir()}
	s := NewStore(cfg, nil)
	s.Seal = seal.New()
	now := time.Date(2026, 12, 4, 10, 42, 0, 0, time.UTC)
	for _, e := range []AuditEntry{
		{Time: now, User: "王芳", Remote: "127.0.0.1", Action: "cancel", Tasks: []string{"api/a1"}},
		{Time: now.Add(time.Minute), User: "li", Remote: "10.0.0.2", Action: "retry", Tasks: []string{"api/a2", "api/a3"}, Batch: "b1"},
	} {
		if err := s.AppendAudit(e); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(cfg.Spool, AuditDir, "2026-12.log")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	genuine := strings.SplitAfter(string(data), "\n")[0]
	// Planted: a line without a seal, one edited, one copied from another
	// month's file (its seal names that file), and garbage.
	f, _ := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"2026-12-04T10:50:00Z","user":"boss","action":"cancel","tasks":["api/a1"]}` + "\n")
	f.WriteString(strings.Replace(genuine, "王芳", "老板", 1))
	f.WriteString("not json\n")
	f.Close()
	other := NewStore(cfg, nil)
	other.Seal = s.Seal
	for _, tc := range []struct {
		name, task, batch string
		want              []string // user, "!" prefix when foreign
	}{
		{name: "a task", task: "api/a1", want: []string{"王芳", "!boss", "!老板"}},
		{name: "a batch", batch: "b1", want: []string{"li"}},
		{name: "another task", task: "api/a3", want: []string{"li"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es, err := other.AuditOf(now.Add(time.Hour), tc.task, tc.batch)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				u := e.User
				if e.Foreign != "" {
					u = "!" + u
				}
				got = append(got, u)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	// The genuine line under another month's name is foreign.
	if e, ok := s.OpenAuditLine("2026-11.log", []byte(strings.TrimSuffix(genuine, "\n"))); !ok || e.Foreign == "" {
		t.Errorf("a line moved to another month: %+v", e)
	}
}

// FuzzOpenAuditLine: no line a colleague writes into the audit file
// panics, or passes as sealed.
func FuzzOpenAuditLine(f *testing.F) {
	s := &Store{Seal: seal.New()}
	f.Add([]byte(`{"time":"2026-12-04T10:50:00Z","user":"boss","action":"cancel"}` + "\t#sg-seal v1 " + strings.Repeat("00", 32)))
	f.Add([]byte("\t#sg-seal v1 \t#sg-seal v1 "))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if e, ok := s.OpenAuditLine("2026-12.log", line); ok && e.Foreign == "" {
			t.Fatalf("a forged line passes as sealed: %q", line)
		}
	})
}
