package logonce

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTest(every time.Duration) (*Limiter, *bytes.Buffer, *clock) {
	var buf bytes.Buffer
	l := New(slog.New(slog.NewTextHandler(&buf, nil)), every)
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l.now = c.now
	return l, &buf, c
}

func lines(b *bytes.Buffer) []string {
	s := strings.TrimSpace(b.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestLimiter_Fail(t *testing.T) {
	l, buf, c := newTest(time.Minute)
	errA, errB := errors.New("operation not permitted"), errors.New("no space left")
	// 100 rescans a second apart, all failing the same way: one line, then
	// one summary per minute.
	logged := 0
	for i := 0; i < 100; i++ {
		if l.Fail("intake:a.yaml", "intake failed", errA) {
			logged++
		}
		c.t = c.t.Add(time.Second)
	}
	if logged != 2 || len(lines(buf)) != 2 {
		t.Fatalf("logged %d lines, want 2 (first + one summary):\n%s", logged, buf)
	}
	if got := lines(buf)[1]; !strings.Contains(got, "repeats=60") || !strings.Contains(got, "total=61") {
		t.Errorf("summary line %q: want repeats=60 total=61", got)
	}
	// A different error under the same key is news.
	if !l.Fail("intake:a.yaml", "intake failed", errB) {
		t.Error("a new error text was not logged")
	}
	// Another key is independent.
	if !l.Fail("intake:b.yaml", "intake failed", errA) {
		t.Error("a second key was not logged")
	}
	if n := l.Failing(); n != 2 {
		t.Errorf("Failing() = %d, want 2", n)
	}
}

func TestLimiter_OK(t *testing.T) {
	l, buf, _ := newTest(time.Minute)
	l.OK("never-failed")
	if buf.Len() != 0 {
		t.Fatalf("OK of a key that never failed logged: %s", buf)
	}
	err := errors.New("boom")
	l.Fail("k", "op failed", err)
	l.Fail("k", "op failed", err)
	l.OK("k")
	ls := lines(buf)
	if len(ls) != 2 || !strings.Contains(ls[1], "recovered") || !strings.Contains(ls[1], "failures=2") {
		t.Fatalf("want one failure line and one recovery line with failures=2, got:\n%s", buf)
	}
	if !l.Fail("k", "op failed", err) {
		t.Error("a failure after recovery was not logged as new")
	}
	l.Forget("k")
	if l.Failing() != 0 {
		t.Error("Forget left the key")
	}
}

func TestLimiter_Prune(t *testing.T) {
	l, _, c := newTest(time.Minute)
	err := errors.New("x")
	for i := 0; i < maxKeys+10; i++ {
		l.Fail(strings.Repeat("k", 1)+time.Duration(i).String(), "m", err)
		c.t = c.t.Add(time.Millisecond)
	}
	if n := l.Failing(); n > maxKeys || n < maxKeys/2 {
		t.Errorf("Failing() = %d after %d keys, want between %d and %d", n, maxKeys+10, maxKeys/2, maxKeys)
	}
}
