package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kardianos/service"
	"go.uber.org/goleak"
)

// newTestService wraps p in a real kardianos service of this machine's
// system; Run only calls Start, RunWait and Stop: nothing is installed.
func newTestService(t *testing.T, p *serviceProgram) service.Service {
	t.Helper()
	s, err := service.New(p, &service.Config{Name: "spoolgate-test", Option: service.KeyValue{"RunWait": p.wait}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runServiceAsync(s service.Service, p *serviceProgram) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- runService(s, p) }()
	return ch
}

func waitErr(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("runService did not return")
		return nil
	}
}

func TestServiceProgram_StopCancelsAndWaits(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	parent, stop := context.WithCancel(context.Background())
	defer stop()
	started, inShutdown, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	p := newServiceProgram(parent, 5*time.Second, func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		close(inShutdown)
		<-release // the daemon's shutdown work
		return nil
	})
	ch := runServiceAsync(newTestService(t, p), p)
	<-started
	stop() // as main's SIGTERM handler does
	<-inShutdown
	// A runService that does not wait for fn returns within microseconds of
	// the cancel; give it ample time to show that, then let fn finish.
	select {
	case err := <-ch:
		close(release)
		t.Fatalf("runService returned (%v) while fn was still shutting down", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := waitErr(t, ch); err != nil {
		t.Fatalf("err = %v, want nil", err)
	}
	if err := p.Stop(nil); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestServiceProgram_FnErrorEndsRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	want := errors.New("spool folder gone")
	var early error
	var mu sync.Mutex
	p := newServiceProgram(context.Background(), time.Second, func(ctx context.Context) error { return want })
	p.onEarlyExit = func(err error) { mu.Lock(); early = err; mu.Unlock() }
	err := waitErr(t, runServiceAsync(newTestService(t, p), p))
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if early != want {
		t.Errorf("onEarlyExit got %v, want %v", early, want)
	}
}

func TestServiceProgram_StopTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	parent, stop := context.WithCancel(context.Background())
	release := make(chan struct{})
	started := make(chan struct{})
	var early atomic.Bool
	p := newServiceProgram(parent, 50*time.Millisecond, func(ctx context.Context) error {
		close(started)
		<-release // ignores ctx: a stuck daemon
		return nil
	})
	p.onEarlyExit = func(error) { early.Store(true) }
	ch := runServiceAsync(newTestService(t, p), p)
	<-started
	stop()
	err := waitErr(t, ch)
	if !errors.Is(err, errStopTimeout) {
		t.Errorf("err = %v, want errStopTimeout", err)
	}
	close(release)
	<-p.done
	if early.Load() {
		t.Error("onEarlyExit called after a Stop")
	}
}

// fakeSysLogger records what would go to the Windows event log.
type fakeSysLogger struct {
	mu    sync.Mutex
	lines []string
}

func TestServiceLogHandler(t *testing.T) {
	sys := &fakeSysLogger{}
	log := slog.New(serviceLogHandler(&bytes.Buffer{}, sys, slog.LevelInfo)).With("lane", "web")
	log.Debug("hidden")
	log.Info("claimed", "task", "t1")
	log.Warn("slow")
	log.WithGroup("g").Error("failed", "err", "x y")
	want := []string{
		`info: level=INFO msg=claimed lane=web task=t1`,
		`warning: level=WARN msg=slow lane=web`,
		`error: level=ERROR msg=failed lane=web g.err="x y"`,
	}
	if !slices.Equal(sys.lines, want) {
		t.Errorf("event log got\n%q\nwant\n%q", sys.lines, want)
	}

	var stderr bytes.Buffer
	slog.New(serviceLogHandler(&stderr, nil, slog.LevelInfo)).Info("hello")
	if !strings.Contains(stderr.String(), "msg=hello") || !strings.Contains(stderr.String(), "time=") {
		t.Errorf("stderr handler wrote %q", stderr.String())
	}
}

func (f *fakeSysLogger) add(kind string, v ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lines = append(f.lines, kind+": "+fmt.Sprint(v...))
	return nil
}
func (f *fakeSysLogger) Error(v ...any) error   { return f.add("error", v...) }
func (f *fakeSysLogger) Warning(v ...any) error { return f.add("warning", v...) }
func (f *fakeSysLogger) Info(v ...any) error    { return f.add("info", v...) }
func (f *fakeSysLogger) Errorf(format string, a ...any) error {
	return f.add("error", fmt.Sprintf(format, a...))
}
func (f *fakeSysLogger) Warningf(format string, a ...any) error {
	return f.add("warning", fmt.Sprintf(format, a...))
}
func (f *fakeSysLogger) Infof(format string, a ...any) error {
	return f.add("info", fmt.Sprintf(format, a...))
}
