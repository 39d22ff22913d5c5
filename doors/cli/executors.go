package cli

import (
	"context"
	"log/slog"
	"strconv"
	"sync"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/apimodel"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func newAPIExecutor(cfg *config.Config, env *Env) (attempt.Executor, error) {
	return apimodel.New(cfg, env.Getenv)
}

// HoldScaleEnv multiplies the usage-limit holds of the web lane, for tests
// that cannot wait out a "try again in 2 minutes" (0.01: 1.2 s). Unset or
// not a positive number: 1.
const HoldScaleEnv = "SPOOLGATE_HOLD_SCALE"

// PaceScaleEnv multiplies the minute, hour and day windows of the
// accounts' paces (not the gap, its jitter or the working hours), for
// tests that cannot wait out a minute.
const PaceScaleEnv = "SPOOLGATE_PACE_WINDOW_SCALE"

func newWebExecutor(cfg *config.Config, env *Env, log *slog.Logger) (attempt.Executor, error) {
	e := browser.NewExecutor(cfg, log.With("component", "browser"))
	if v, err := strconv.ParseFloat(env.Getenv(HoldScaleEnv), 64); err == nil && v > 0 {
		e.HoldScale = v
		log.Warn("usage-limit holds are time-scaled", "env", HoldScaleEnv, "scale", v)
	}
	return e, nil
}

// webSessions gives each web session its own browser executor, on its own
// profile, when the web lane runs the browser (tests' fakes are shared by
// all sessions and tell them apart by the job's session), each with the
// settings of the configured one (SPOOLGATE_HOLD_SCALE...). It remembers
// them by account, so the console's live view can close a session's warm
// browser before it opens the account's profile itself.
type webSessions struct {
	web *browser.Executor
	mu  sync.Mutex
	by  map[string]*browser.Executor
}

func newWebSessions(execs map[taskfile.Kind]attempt.Executor) *webSessions {
	web, _ := execs[taskfile.KindWeb].(*browser.Executor)
	return &webSessions{web: web, by: map[string]*browser.Executor{}}
}

// executors is the lanes' SessionExecutor, or nil with the fakes.
func (w *webSessions) executors() lanes.SessionExecutor {
	if w.web == nil {
		return nil
	}
	return func(s config.WebSession) attempt.Executor {
		e := w.web.ForSession(s)
		w.mu.Lock()
		w.by[s.Account] = e
		w.mu.Unlock()
		return e
	}
}

// free closes account's warm browser, if its session kept one: the live
// view calls it once it holds the session's lock, so no task runs on it.
func (w *webSessions) free(_ context.Context, account string) error {
	w.mu.Lock()
	e := w.by[account]
	w.mu.Unlock()
	if e != nil {
		e.Release(true)
	}
	return nil
}
