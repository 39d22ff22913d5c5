package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/kardianos/service"
)

// errStopTimeout is returned when the daemon did not end within the grace
// period after the service manager asked it to stop.
var errStopTimeout = errors.New("daemon did not stop in time")

// defaultServiceGrace is the stop wait when runMaybeAsService gets none:
// the default shutdownGrace (30s) and a little more.
const defaultServiceGrace = 35 * time.Second

// exitProcess ends the process; a variable so a test can see the call.
var exitProcess = os.Exit

// runMaybeAsService runs fn, the daemon, and returns fn's error.
//
// Started from a shell (service.Interactive), it just calls fn(ctx): ctx is
// main's, canceled by SIGINT/SIGTERM.
//
// Started by a service manager, fn runs inside a kardianos/service Program:
// Start launches fn in a goroutine with a context derived from ctx, and Stop
// (the manager's stop request, or SIGTERM on systemd and launchd) cancels
// that context and waits up to grace for fn to return; pass a little more
// than the config's shutdownGrace, so the daemon's own grace ends first
// (grace <= 0 means defaultServiceGrace).
// When fn ends on its own (a fatal error), the process ends too, with fn's
// error, so the manager's restart-on-failure applies. name is the
// service's name (the Windows event source); SPOOLGATE_SERVICE_NAME, which
// `spoolgate service install` sets in the service's environment, overrides
// it, so a service installed with --name finds its own.
//
// As a Windows service it also changes to the --config file's folder (a
// service starts in System32) and sends slog.Default to the event log, so
// the daemon should take its loggers from slog.Default(); stderr, which
// goes nowhere there, only receives the failure to open the event log. On
// systemd and launchd, stderr stays as it is: the journal, or launchd's log
// file.
func runMaybeAsService(ctx context.Context, name string, stderr io.Writer, grace time.Duration, fn func(ctx context.Context) error) error {
	if service.Interactive() {
		return fn(ctx)
	}
	if grace <= 0 {
		grace = defaultServiceGrace
	}
	if n := os.Getenv(serviceNameEnv); n != "" {
		name = n // installed with --name
	}
	p := newServiceProgram(ctx, grace, fn)
	s, err := service.New(p, &service.Config{
		Name: name,
		// Instead of kardianos' own signal handler: ctx is canceled by
		// main's SIGTERM/SIGINT handler, and a daemon that fails must end
		// the wait too. Not used on Windows, where the SCM drives Stop.
		Option: service.KeyValue{"RunWait": p.wait},
	})
	if err != nil {
		return fmt.Errorf("service: %w", err)
	}
	if runtime.GOOS == "windows" {
		if dir := serviceWorkDir(os.Args[1:]); dir != "" {
			if err := os.Chdir(dir); err != nil {
				fmt.Fprintf(stderr, "spoolgate: service: working directory: %v\n", err)
			}
		}
		l, err := s.Logger(nil)
		if err != nil {
			fmt.Fprintf(stderr, "spoolgate: service: event log: %v\n", err)
		} else {
			slog.SetDefault(slog.New(serviceLogHandler(stderr, l, slog.LevelInfo)))
		}
		// The SCM keeps the service "running" until it asks it to stop, so
		// a daemon that fails on its own must end the process for the
		// service's OnFailure restart to apply.
		p.onEarlyExit = func(err error) {
			code := 0
			if err != nil {
				code = 1
				if l != nil {
					l.Error("spoolgate stopped: " + err.Error())
				}
			}
			exitProcess(code)
		}
	}
	return runService(s, p)
}

// runService runs p under s until the manager stops it or fn returns, and
// returns fn's error, or why fn could not be waited for.
func runService(s service.Service, p *serviceProgram) error {
	runErr := s.Run()
	select {
	case <-p.done:
		return p.result()
	default:
	}
	if runErr != nil {
		return fmt.Errorf("service: %w", runErr)
	}
	return errors.New("service: stopped before the daemon ended")
}

// serviceProgram is the kardianos/service Program around the daemon.
type serviceProgram struct {
	parent      context.Context
	grace       time.Duration
	fn          func(context.Context) error
	onEarlyExit func(error) // called after fn returns without a Stop, before done closes; may be nil
	done        chan struct{}

	mu       sync.Mutex
	cancel   context.CancelFunc
	stopping bool
	err      error
}

func newServiceProgram(parent context.Context, grace time.Duration, fn func(context.Context) error) *serviceProgram {
	return &serviceProgram{parent: parent, grace: grace, fn: fn, done: make(chan struct{})}
}

// Start launches fn and returns at once, as the service manager expects.
func (p *serviceProgram) Start(service.Service) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancel != nil {
		return errors.New("service: already started")
	}
	ctx, cancel := context.WithCancel(p.parent)
	p.cancel = cancel
	go func() {
		err := p.fn(ctx)
		p.mu.Lock()
		p.err = err
		early := !p.stopping
		p.mu.Unlock()
		// onEarlyExit before done: whoever waits for done finds it
		// called (in the service it ends the process, and done is moot).
		if early && p.onEarlyExit != nil {
			p.onEarlyExit(err)
		}
		close(p.done)
	}()
	return nil
}

// Stop cancels fn's context and waits for fn to return, at most grace.
// Safe to call twice, and before Start.
func (p *serviceProgram) Stop(service.Service) error {
	p.mu.Lock()
	p.stopping = true
	cancel := p.cancel
	p.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	t := time.NewTimer(p.grace)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
		return fmt.Errorf("%w: waited %s", errStopTimeout, p.grace)
	}
}

// wait blocks until the parent context ends (main's signal handler) or fn
// returns: the RunWait of kardianos/service on systemd and launchd.
func (p *serviceProgram) wait() {
	select {
	case <-p.parent.Done():
	case <-p.done:
	}
}

func (p *serviceProgram) result() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// serviceWorkDir returns the folder of the --config file in args (the
// arguments serviceConfig installed), or "" if there is none or it is
// relative.
func serviceWorkDir(args []string) string {
	for i, a := range args {
		var v string
		switch {
		case a == "--":
			return ""
		case a == "--config" || a == "-config":
			if i+1 < len(args) {
				v = args[i+1]
			}
		case strings.HasPrefix(a, "--config="):
			v = strings.TrimPrefix(a, "--config=")
		case strings.HasPrefix(a, "-config="):
			v = strings.TrimPrefix(a, "-config=")
		default:
			continue
		}
		if v == "" || !filepath.IsAbs(v) {
			return ""
		}
		return filepath.Dir(v)
	}
	return ""
}

// serviceLogHandler returns the slog handler for the daemon: with a system
// logger (a Windows service's event log), each record becomes one event
// whose type follows its level and whose text is the record in slog's text
// form without the time (the event log keeps its own); without one
// (interactive, systemd, launchd), text lines on stderr as they are.
func serviceLogHandler(stderr io.Writer, sys service.Logger, level slog.Leveler) slog.Handler {
	opts := &slog.HandlerOptions{Level: level}
	if sys == nil {
		return slog.NewTextHandler(stderr, opts)
	}
	opts.ReplaceAttr = func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	h := &eventLogHandler{mu: new(sync.Mutex), buf: new(bytes.Buffer), sys: sys}
	h.text = slog.NewTextHandler(h.buf, opts)
	return h
}

// eventLogHandler formats with a TextHandler into a shared buffer and hands
// each line to the system logger. Handlers derived by WithAttrs/WithGroup
// share the buffer, so they share its mutex too.
type eventLogHandler struct {
	mu   *sync.Mutex
	buf  *bytes.Buffer
	text slog.Handler
	sys  service.Logger
}

func (h *eventLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.text.Enabled(ctx, l)
}

func (h *eventLogHandler) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	h.buf.Reset()
	err := h.text.Handle(ctx, r)
	line := strings.TrimSuffix(h.buf.String(), "\n")
	h.mu.Unlock()
	if err != nil {
		return err
	}
	switch {
	case r.Level >= slog.LevelError:
		return h.sys.Error(line)
	case r.Level >= slog.LevelWarn:
		return h.sys.Warning(line)
	default:
		return h.sys.Info(line)
	}
}

func (h *eventLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.text = h.text.WithAttrs(as)
	return &c
}

func (h *eventLogHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.text = h.text.WithGroup(name)
	return &c
}
