package browser

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/spoolgate/spoolgate/spool/config"
)

// Login opens a visible browser on this instance's profile at the site's
// page, so a person can sign in once, and waits until the browser is
// closed (its last window) or ctx ends; then it closes whatever is left by
// the usual close procedure. The caller holds the web-runner lock, so no
// task runs on the profile meanwhile.
func Login(ctx context.Context, cfg *config.Config, site string, log *slog.Logger) error {
	return LoginProfile(ctx, cfg, site, ProfileDir(cfg), log)
}

// LoginProfile is Login on one session's profile (config.WebSession.Profile).
func LoginProfile(ctx context.Context, cfg *config.Config, site, profile string, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sc, ok := cfg.Sites[site]
	if !ok {
		return fmt.Errorf("site %q is not in the config", site)
	}
	b, err := launchChecked(ctx, cfg, profile, false, log)
	if err != nil {
		return err
	}
	defer b.Close()
	nctx, cancel := context.WithTimeout(b.Context(), 60*time.Second)
	err = chromedp.Do(nctx, chromedp.Navigate(sc.URL))
	cancel()
	if err != nil && b.Context().Err() == nil {
		log.Warn("login: the site did not load; the window stays open", "url", sc.URL, "err", err)
	}
	log.Info("login: sign in to "+site+" in the browser window, then close the window", "url", sc.URL, "profile", profile)
	select {
	case <-b.Context().Done():
		log.Info("login: browser closed")
	case <-ctx.Done():
		log.Info("login: interrupted; closing the browser")
	}
	return nil
}

// LoginPage is a headless browser on a session's profile at the site's
// page, for signing in from somewhere else than a visible window (the
// console's live view streams its screen and sends the operator's input
// to Tab). As for Login, the caller holds the session's lock.
type LoginPage struct {
	b *Browser
	d *driver
}

// OpenLoginPage launches the headless browser on profile after the checks
// a task makes first, and loads the site's page; a page that does not
// load is left open (the operator sees it and may act on it).
func OpenLoginPage(ctx context.Context, cfg *config.Config, site, profile string, log *slog.Logger) (*LoginPage, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sc, ok := cfg.Sites[site]
	if !ok {
		return nil, fmt.Errorf("site %q is not in the config", site)
	}
	b, err := launchChecked(ctx, cfg, profile, true, log)
	if err != nil {
		return nil, err
	}
	nctx, cancel := context.WithTimeout(b.Context(), 60*time.Second)
	stop := context.AfterFunc(ctx, cancel)
	err = chromedp.Do(nctx, chromedp.Navigate(sc.URL))
	stop()
	cancel()
	if ctx.Err() != nil {
		b.Close()
		return nil, context.Cause(ctx)
	}
	if err != nil {
		log.Warn("login page: the site did not load; the page stays open", "url", sc.URL, "err", err)
	}
	return &LoginPage{b: b, d: newDriver(sc, site, Timings{}, log)}, nil
}

// Tab is the page's chromedp context; it ends when the browser is gone.
func (p *LoginPage) Tab() context.Context { return p.b.Context() }

// SignedIn reads the page as `spoolgate check` does: signed in when the
// signed-out link does not show and the message field (or a usage-limit
// message) does. ctx bounds the look.
func (p *LoginPage) SignedIn(ctx context.Context) (bool, error) {
	tab, cancel := context.WithCancel(p.b.Context())
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	st, err := p.d.look(tab)
	if err != nil {
		return false, err
	}
	return st.signedIn(), nil
}

// signedIn is the signed-in rule of check and of the login page.
func (st pageState) signedIn() bool { return !st.LoggedOut && (st.Input || st.Limited != "") }

// Close closes the browser by the usual close procedure; safe twice.
func (p *LoginPage) Close() { p.b.Close() }
