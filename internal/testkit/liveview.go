package testkit

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
)

// LiveView is what the console's live page (/live/ACCOUNT) shows its
// operator, read from the operator's own Chromium: the view's state and
// status line, the last streamed frame's number, the streamed page's
// viewport and where the image sits on the operator's page. The console's
// tests and the end-to-end sign-in read it alike.
type LiveView struct {
	State  string  `json:"state"`
	Text   string  `json:"text"`
	Seq    int     `json:"seq"`
	W      float64 `json:"w"` // the streamed page's viewport
	H      float64 `json:"h"`
	Left   float64 `json:"left"` // the image on the operator's page
	Top    float64 `json:"top"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

const liveViewJS = `(() => { const s = document.getElementById('status'), i = document.getElementById('img');
if (!s || !i) return {state: '', text: document.body ? document.body.innerText : ''};
const b = i.getBoundingClientRect();
return {state: s.dataset.state, text: s.textContent, seq: +i.dataset.seq, w: +(i.dataset.w || 0), h: +(i.dataset.h || 0),
  left: b.left, top: b.top, width: b.width, height: b.height}; })()`

// LookLive reads the live page open in ctx's tab. A page between loads
// reads as the zero LiveView (the caller waits for a condition); a dead
// browser context fails the test.
func LookLive(t testing.TB, ctx context.Context) LiveView {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[LiveView](liveViewJS))
	if err != nil && ctx.Err() != nil {
		t.Fatal(err)
	}
	return v
}
