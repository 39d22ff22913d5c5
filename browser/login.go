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
