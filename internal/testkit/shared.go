package testkit

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"
)

// SharedChromium is one headless Chromium for the tests of a package that
// only read pages (issue 54): each test gets a tab in a browser context of
// its own (cookies, storage and cache apart, as an incognito window),
// closed with the test. Tests of launch, profiles and crashes start their
// own. The package's TestMain runs through Main, which closes the browser
// before goleak looks.
type SharedChromium struct {
	once    sync.Once
	dir     string
	ctx     context.Context // the browser's first tab
	cancels []context.CancelFunc
	err     error
}

// Tab returns a new tab of the shared browser, started on first use,
// closed at the test's end.
func (s *SharedChromium) Tab(t testing.TB) context.Context {
	t.Helper()
	path := NeedChromium(t)
	s.once.Do(func() {
		if s.dir, s.err = os.MkdirTemp("", "spoolgate-shared-chromium-"); s.err != nil {
			return
		}
		actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromiumOptions(path, s.dir)...)
		ctx, cancel := chromedp.NewContext(actx)
		s.ctx, s.cancels = ctx, []context.CancelFunc{cancel, cancelA}
		s.err = chromedp.Do(ctx) // starts the browser: no timeout on this first call
	})
	if s.err != nil {
		t.Fatalf("the shared Chromium: %v", s.err)
	}
	ctx, cancel := chromedp.NewContext(s.ctx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx); err != nil { // opens the tab now, not at the first action
		cancel()
		t.Fatalf("a tab of the shared Chromium: %v", err)
	}
	t.Cleanup(cancel)
	return ctx
}

// Close ends the browser, if a test started it, and removes its profile.
func (s *SharedChromium) Close() {
	for _, c := range s.cancels {
		c()
	}
	s.cancels = nil
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// Main runs the package's tests, closes s, and then fails the run if a
// goroutine leaked (goleak.VerifyTestMain, with the browser gone first).
func (s *SharedChromium) Main(m *testing.M, opts ...goleak.Option) {
	code := m.Run()
	s.Close()
	if code == 0 {
		if err := goleak.Find(opts...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
