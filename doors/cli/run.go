package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/doors/console"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func init() { register("run", "run the daemon in the foreground", cmdRun) }

// newExecutors builds each lane's executor from the config. Tests replace it
// with fakes that enforce the real limits.
var newExecutors = defaultExecutors

func cmdRun(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("run", &c)
	poll := fs.Bool("poll", false, "no fsnotify: rescan only (network shares)")
	verbose := fs.Bool("v", false, "debug logging")
	if pos, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return usagef("run takes no arguments, got %q", pos[0])
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	if *poll {
		cfg.Poll = true
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level})))
	// The daemon seals what it writes for other daemons (issue 20): its
	// key beside the config, created on first start.
	if _, err := useKey(c.store, true, slog.Default()); err != nil {
		return &UsageError{Msg: err.Error()}
	}
	// Under a service manager runMaybeAsService points slog.Default at the
	// system's log (the Windows event log), so take the logger inside.
	return runMaybeAsService(ctx, "spoolgate", env.Stderr, cfg.ShutdownGrace.D()+5*time.Second, func(ctx context.Context) error {
		return runDaemon(ctx, c.store, env, slog.Default())
	})
}

// runDaemon runs until ctx ends, then shuts down in two stages: drain for
// shutdownGrace, then cancel what still runs back to pending. A second
// SIGINT/SIGTERM during the drain cancels at once. store is the process's
// one Store, sealed with the installation key; it logs to log.
func runDaemon(ctx context.Context, store *spool.Store, env *Env, log *slog.Logger) error {
	cfg := store.Cfg
	store.Log = log
	execs, err := newExecutors(cfg, env, log)
	if err != nil {
		return &UsageError{Msg: err.Error()}
	}
	sessions := newWebSessions(execs)
	d := &lanes.Daemon{Store: store, Executors: execs, Log: log, SessionExecutor: sessions.executors()}
	if v, err := strconv.ParseFloat(env.Getenv(PaceScaleEnv), 64); err == nil && v > 0 {
		d.PaceScale = v
		log.Warn("account pace windows are time-scaled", "env", PaceScaleEnv, "scale", v)
	}
	defer closeExecutors(execs)
	// The spool's folders exist before the console and the door answer:
	// a request in the moment before the lanes start (a task with
	// output:, on a fresh spool) must not find output/ missing. The lanes
	// make them again, which changes nothing.
	if err := store.Layout.Create(); err != nil {
		return err
	}
	// console.Start handles "off" and a port in use itself (a warning).
	hs, err := console.Start(ctx, store, d.Info, log.With("component", "http"))
	if err != nil {
		return &UsageError{Msg: err.Error()}
	}
	defer hs.Stop()
	// A live view that sees the page signed in ends a signed-out or
	// challenge hold (a usage limit's runs out by itself).
	hs.SetLiveHooks(func(account string) {
		if ended, err := store.ClearSignInHold(account); err != nil {
			log.Error("signed in from the page: the account's hold not ended", "account", account, "err", err)
		} else if ended {
			log.Info("signed in from the page: the account's hold ended", "account", account)
		}
	}, sessions.free)
	ops := newDailyOps(cfg, store, log)
	d.Hooks = hs.Hooks().And(ops.hooks())
	// The daemon's own goroutines must not end with ctx: shutdown is staged.
	if err := d.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	ops.start(context.WithoutCancel(ctx), d.Info)
	defer ops.stop()
	if err := notifyReady(); err != nil {
		log.Warn("sd_notify READY=1 failed", "err", err)
	}
	<-ctx.Done()
	_ = notifyStopping()
	stopBy := time.NewTimer(cfg.ShutdownGrace.D() + shutdownSlack)
	defer stopBy.Stop()
	log.Info("shutting down: draining", "grace", cfg.ShutdownGrace.D())
	grace, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace.D())
	defer cancel()
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	go func() {
		select {
		case <-again:
			log.Warn("second signal: canceling running tasks now")
			cancel()
		case <-grace.Done():
		}
	}()
	// A runner blocked in the kernel (a hung network share) cannot be
	// canceled: the daemon stops without it after shutdownGrace + 5 s. Its
	// task stays in running/ under this pid, which the next start reclaims
	// at once (its owner is gone).
	stopped := make(chan struct{})
	go func() { d.Shutdown(grace); close(stopped) }()
	select {
	case <-stopped:
		browser.WaitClosed() // the last answer was written before its browser closed
		return nil
	case <-stopBy.C:
		log.Error("shutdown: still blocked after shutdownGrace + 5s (a file operation that does not return?): exiting; tasks left in running/ are reclaimed at the next start")
		// What was blocked, for the report: every goroutine's stack,
		// grouped (a few KB), on stderr after the log line.
		fmt.Fprintln(env.Stderr, BlockedDumpHeader)
		_ = pprof.Lookup("goroutine").WriteTo(env.Stderr, 1)
		return errShutdownBlocked
	}
}

// shutdownSlack is how long past shutdownGrace the daemon waits for its
// runners to end before it exits without them.
const shutdownSlack = 5 * time.Second

var errShutdownBlocked = errors.New("shutdown blocked past shutdownGrace + 5s")

// BlockedDumpHeader heads the goroutine dump of a blocked shutdown.
const BlockedDumpHeader = "goroutines at the blocked shutdown:"

func defaultExecutors(cfg *config.Config, env *Env, log *slog.Logger) (map[taskfile.Kind]attempt.Executor, error) {
	out := map[taskfile.Kind]attempt.Executor{}
	for _, m := range cfg.Models {
		if _, done := out[m.Kind]; done {
			continue
		}
		switch m.Kind {
		case taskfile.KindAPI:
			ex, err := newAPIExecutor(cfg, env)
			if err != nil {
				return nil, err
			}
			out[m.Kind] = ex
		case taskfile.KindWeb:
			ex, err := newWebExecutor(cfg, env, log)
			if err != nil {
				return nil, err
			}
			out[m.Kind] = ex
		default:
			return nil, fmt.Errorf("model %s: unknown kind %q", m.Name, m.Kind)
		}
	}
	return out, nil
}

// closeExecutors releases what executors hold (idle connections).
func closeExecutors(execs map[taskfile.Kind]attempt.Executor) {
	for _, ex := range execs {
		if c, ok := ex.(interface{ Close() }); ok {
			c.Close()
		}
	}
}
