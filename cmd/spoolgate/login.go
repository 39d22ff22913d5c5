package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/spool"
)

func init() {
	register("login", "open a visible browser on the web profile to sign in to SITE", cmdLogin)
}

// cmdLogin: spoolgate login SITE. It holds the web-runner lock while the
// browser is open, so the web lane runs no task on the profile meanwhile.
func cmdLogin(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("login", &c)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("login: want exactly one SITE, got %d arguments", len(pos))
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	site := pos[0]
	if _, ok := cfg.Sites[site]; !ok {
		return usagef("login: site %q is not in the config's sites:", site)
	}
	lock := spool.NewRunnerLock(cfg.Web.Profiles)
	if err := lock.TryLock(cfg.Host); err != nil {
		if errors.Is(err, spool.ErrLockHeld) {
			return fmt.Errorf("login: the web profile is in use: %s is held by %s (a running spoolgate daemon holds it for its web lane); stop that daemon, then retry", lock.Path(), lock.Holder())
		}
		return fmt.Errorf("login: %w", err)
	}
	defer lock.Unlock()
	log := slog.New(slog.NewTextHandler(env.Stderr, nil)).With("component", "login")
	fmt.Fprintf(env.Stdout, "Sign in to %s in the browser window, then close it.\n", site)
	if err := browser.Login(ctx, cfg, site, log); err != nil {
		return fmt.Errorf("login: %w", err)
	}
	return nil
}
