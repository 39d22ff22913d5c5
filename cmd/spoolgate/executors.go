package main

import (
	"log/slog"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/lanes"
	"github.com/spoolgate/spoolgate/lanes/apimodel"
	"github.com/spoolgate/spoolgate/spool"
)

func newAPIExecutor(cfg *spool.Config, env *Env) (lanes.Executor, error) {
	return apimodel.New(cfg, env.Getenv)
}

func newWebExecutor(cfg *spool.Config, log *slog.Logger) (lanes.Executor, error) {
	return browser.NewExecutor(cfg, log.With("component", "browser")), nil
}
