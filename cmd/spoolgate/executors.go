package main

import (
	"log/slog"
	"strconv"

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

// holdScaleEnv multiplies the usage-limit holds of the web lane, for tests
// that cannot wait out a "try again in 2 minutes" (0.01: 1.2 s). Unset or
// not a positive number: 1.
const holdScaleEnv = "SPOOLGATE_HOLD_SCALE"

// paceScaleEnv multiplies the minute, hour and day windows of the
// accounts' paces (not the gap, its jitter or the working hours), for
// tests that cannot wait out a minute.
const paceScaleEnv = "SPOOLGATE_PACE_WINDOW_SCALE"

func newWebExecutor(cfg *config.Config, env *Env, log *slog.Logger) (attempt.Executor, error) {
	e := browser.NewExecutor(cfg, log.With("component", "browser"))
	if v, err := strconv.ParseFloat(env.Getenv(holdScaleEnv), 64); err == nil && v > 0 {
		e.HoldScale = v
		log.Warn("usage-limit holds are time-scaled", "env", holdScaleEnv, "scale", v)
	}
	return e, nil
}

// sessionExecutors gives each web session its own browser executor, on its
// own profile, when the web lane runs the browser (tests' fakes are shared
// by all sessions and tell them apart by the job's session).
// Each has the settings of the configured one (SPOOLGATE_HOLD_SCALE...).
func sessionExecutors(execs map[taskfile.Kind]attempt.Executor) lanes.SessionExecutor {
	web, ok := execs[taskfile.KindWeb].(*browser.Executor)
	if !ok {
		return nil
	}
	return func(s config.WebSession) attempt.Executor { return web.ForSession(s) }
}
