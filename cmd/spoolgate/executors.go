package main

import (
	"log/slog"
	"strconv"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/apimodel"
	"github.com/spoolgate/spoolgate/spool"
)

func newAPIExecutor(cfg *spool.Config, env *Env) (lanes.Executor, error) {
	return apimodel.New(cfg, env.Getenv)
}

// holdScaleEnv multiplies the usage-limit holds of the web lane, for tests
// that cannot wait out a "try again in 2 minutes" (0.01: 1.2 s). Unset or
// not a positive number: 1.
const holdScaleEnv = "SPOOLGATE_HOLD_SCALE"

func newWebExecutor(cfg *spool.Config, env *Env, log *slog.Logger) (lanes.Executor, error) {
	e := browser.NewExecutor(cfg, log.With("component", "browser"))
	if v, err := strconv.ParseFloat(env.Getenv(holdScaleEnv), 64); err == nil && v > 0 {
		e.HoldScale = v
		log.Warn("usage-limit holds are time-scaled", "env", holdScaleEnv, "scale", v)
	}
	return e, nil
}
