//go:build linux

package browser

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/config"
)

// The package's tests that only read pages share one Chromium (issue 54):
// each gets a tab in a browser context of its own (cookies, storage and
// cache apart, as an incognito window), closed with the test. Tests of
// launch, profiles, leftovers and crashes launch their own, through the
// Executor. TestMain closes the shared browser before goleak looks.
var shared struct {
	once    sync.Once
	b       *Browser
	profile string
	err     error
}

// tab returns a new tab of the shared browser, in a browser context of
// its own, closed at the test's end.
func tab(t testing.TB) context.Context {
	t.Helper()
	testkit.NeedChromium(t)
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "spoolgate-browser-tests-")
		if err != nil {
			shared.err = err
			return
		}
		cfg, err := config.ParseConfig([]byte("web: {profiles: " + dir + ", instance: shared}\n"))
		if err != nil {
			shared.err = err
			return
		}
		shared.profile = ProfileDir(cfg)
		if shared.err = ensureProfile(shared.profile); shared.err != nil {
			return
		}
		shared.b, shared.err = Launch(context.Background(), cfg, shared.profile, true, slog.New(slog.DiscardHandler))
	})
	if shared.err != nil {
		t.Fatalf("the shared browser: %v", shared.err)
	}
	ctx, cancel := chromedp.NewContext(shared.b.Context(), chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx); err != nil { // opens the tab now, not at the first action
		cancel()
		t.Fatalf("a tab of the shared browser: %v", err)
	}
	t.Cleanup(cancel)
	return ctx
}

// closeShared closes the shared browser, if a test started it, and
// removes its profile; no process of it may be left.
func closeShared() {
	if shared.b == nil {
		return
	}
	shared.b.Close()
	_ = os.RemoveAll(shared.profile)
}
