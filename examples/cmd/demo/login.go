package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/spool/config"
)

// login signs one account in on its session's profile the way a person
// would with `spoolgate login SITE --account NAME`, only headless: a
// browser on the profile opens the stand-in's /login link, which sets a
// persistent session cookie that the daemon's browser finds on the same
// profile. It runs before the daemon starts, so nothing else uses the
// profile.
func login(ctx context.Context, cfg *config.Config, profile, chatURL, user string) error {
	if err := os.MkdirAll(profile, 0o700); err != nil {
		return err
	}
	b, err := browser.Launch(ctx, cfg, profile, true, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer b.Close()
	lctx, cancel := context.WithTimeout(b.Context(), 20*time.Second)
	defer cancel()
	if err := chromedp.Do(lctx, chromedp.Navigate(strings.TrimSuffix(chatURL, "/")+"/login?user="+user)); err != nil {
		return fmt.Errorf("open the login page: %w", err)
	}
	signedOut, err := chromedp.Run(lctx, chromedp.Evaluate[bool](fmt.Sprintf("document.querySelector(%q) !== null", cfg.Sites["standin"].LoggedOut)))
	if err != nil {
		return fmt.Errorf("look at the page after login: %w", err)
	}
	if signedOut {
		return fmt.Errorf("the stand-in still shows the signed-out page after /login")
	}
	return nil
}
