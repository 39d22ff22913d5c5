package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/doors/console"
	"github.com/spoolgate/spoolgate/spool/config"
)

func init() {
	register("login", "open a visible browser on a web session's profile to sign in to SITE (--account NAME); --remote prints the console's link to sign in from the page", cmdLogin)
}

// cmdLogin: spoolgate login SITE [--account NAME] [--remote]. It holds
// the session's lock while the browser is open, so the web lane runs no
// task on the profile meanwhile; --remote prints the console's link to
// the account's live view instead (signing in from the page).
func cmdLogin(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("login", &c)
	account := fs.String("account", "", "the account (web session) to sign in; default: the only session of SITE")
	remote := fs.Bool("remote", false, "print the console's link to sign in from the page (the account's headless browser, streamed) instead of opening a window")
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
	sess, err := webSessionFor(cfg, "login", site, *account)
	if err != nil {
		return err
	}
	if *remote {
		// The running daemon's console opens the view and takes the
		// session's lock then; this command only names the link.
		link, err := console.LiveURL(cfg, sess.Account)
		if err != nil {
			return fmt.Errorf("login --remote: %w", err)
		}
		fmt.Fprintf(env.Stdout, "Sign in to %s as account %s from the page: %s\n", site, sess.Account, link)
		fmt.Fprintln(env.Stdout, "(log in to the console first; the daemon must be running; the account's tasks wait while the page is open)")
		return nil
	}
	unlock, err := lockSession("login", cfg, sess, stopDaemon)
	if err != nil {
		return err
	}
	defer unlock()
	log := slog.New(slog.NewTextHandler(env.Stderr, nil)).With("component", "login", "account", sess.Account)
	fmt.Fprintf(env.Stdout, "Sign in to %s as account %s in the browser window, then close it.\n", site, sess.Account)
	if err := browser.LoginProfile(ctx, cfg, site, sess.Profile, log); err != nil {
		return fmt.Errorf("login: %w", err)
	}
	// A signed-out or challenge hold ends with the sign-in; the next task
	// checks the page again (and holds the account again if it is still
	// signed out). A usage limit's hold runs on.
	if c.store != nil {
		ended, err := c.store.ClearSignInHold(sess.Account)
		switch {
		case err != nil:
			fmt.Fprintf(env.Stdout, "account %s: its hold could not be ended (%v): run spoolgate resume --account %s\n", sess.Account, err, sess.Account)
		case ended:
			fmt.Fprintf(env.Stdout, "account %s: hold ended by the sign-in; its tasks are tried again\n", sess.Account)
		}
	}
	return nil
}

// webSessionFor picks the session that login or check (cmd) opens: the
// named account's, or the only session of site (the one session of a
// config without account sites). Several sessions of site and no
// --account is a usage error that lists them.
func webSessionFor(cfg *config.Config, cmd, site, account string) (config.WebSession, error) {
	all := cfg.WebSessions()
	if account != "" {
		s, ok := cfg.WebSession(account)
		if !ok {
			return s, usagef("%s: account %q is no web session in the config (give it accounts.%s.site)", cmd, account, account)
		}
		if !s.Legacy && s.Site != site {
			return s, usagef("%s: account %q signs in to site %q, not %q", cmd, account, s.Site, site)
		}
		return s, nil
	}
	var of []config.WebSession
	for _, s := range all {
		if s.Legacy || s.Site == site {
			of = append(of, s)
		}
	}
	switch len(of) {
	case 0:
		// No web model uses the site yet: its profile is the first one's.
		return config.WebSession{Account: config.DefaultAccount, Profile: browser.ProfileDir(cfg), Lock: config.RunnerLockPath(cfg.Web.Profiles)}, nil
	case 1:
		return of[0], nil
	}
	names := make([]string, len(of))
	for i, s := range of {
		names[i] = s.Account
	}
	return config.WebSession{}, usagef("%s: site %q has %d sessions (%s): name one with --account", cmd, site, len(of), strings.Join(names, ", "))
}
