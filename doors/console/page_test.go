package console

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/status"
)

type pageBar struct {
	Kind     string  `json:"kind"`
	Name     string  `json:"name"`
	Finished int     `json:"finished"`
	Total    int     `json:"total"`
	Label    string  `json:"label"`
	Ratio    float64 `json:"ratio"`  // drawn fill width (every outcome) / bar width
	Failed   float64 `json:"failed"` // drawn red (failed) width / bar width
}

type pageView struct {
	Title string    `json:"title"`
	Bars  []pageBar `json:"bars"`
	Held  []string  `json:"held"`
	Runs  int       `json:"runs"`
	Text  string    `json:"text"`
}

const pageJS = `(() => ({
  title: document.title,
  bars: Array.from(document.querySelectorAll('.bar')).map(b => ({
    kind: b.dataset.kind, name: b.dataset.name,
    finished: +b.dataset.finished, total: +b.dataset.total,
    label: b.nextElementSibling ? b.nextElementSibling.textContent : '',
    ratio: Array.from(b.querySelectorAll('.fill')).reduce((s, e) => s + e.getBoundingClientRect().width, 0) / b.getBoundingClientRect().width,
    failed: Array.from(b.querySelectorAll('.fill.fail')).reduce((s, e) => s + e.getBoundingClientRect().width, 0) / b.getBoundingClientRect().width,
  })),
  held: Array.from(document.querySelectorAll('.held')).map(e => e.textContent),
  runs: document.querySelectorAll('tr.run').length,
  text: document.body ? document.body.innerText : '',
}))()`

// TestHTTPServer_PageInChromium loads / in a real headless Chromium and
// checks that it renders, and that every bar shows, and draws, the counts
// of the spool.
func TestHTTPServer_PageInChromium(t *testing.T) {
	browser := testkit.NeedChromium(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	h := startTestHTTP(t, cfg, webInfo(false))
	defer h.Stop()
	want, err := status.NewSnapshotter(spool.NewStore(cfg, nil), nil).Snapshot(time.Now())
	if err != nil {
		t.Fatal(err)
	}

	actx, cancelA := chromedp.NewExecAllocator(context.Background(), testkit.ChromiumOptions(t, browser)...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()

	if _, err := chromedp.Run(ctx, chromedp.Navigate("http://"+h.Addr().String()+"/")); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	// Poll: the page reloads itself, so an evaluation may land mid-load.
	var v pageView
	var evalErr error
	if !testkit.Until(20*time.Second, func() bool {
		v, evalErr = chromedp.Run(ctx, chromedp.Evaluate[pageView](pageJS))
		return evalErr == nil && len(v.Bars) == 2+len(want.Batches)
	}) {
		t.Fatalf("page never rendered its bars: err %v, view %+v", evalErr, v)
	}
	if v.Title != "spoolgate status" {
		t.Errorf("title %q", v.Title)
	}
	expect := map[string]status.Progress{}
	failedOf := map[string]int{}
	for _, ln := range want.Lanes {
		expect["lane/"+ln.Lane] = ln.Progress
		failedOf["lane/"+ln.Lane] = ln.Counts.Failed
	}
	for _, b := range want.Batches {
		expect["batch/"+b.Batch] = b.Progress
		failedOf["batch/"+b.Batch] = b.Counts.Failed
	}
	for _, b := range v.Bars {
		p, ok := expect[b.Kind+"/"+b.Name]
		if !ok {
			t.Errorf("unexpected bar %+v", b)
			continue
		}
		delete(expect, b.Kind+"/"+b.Name)
		if b.Finished != p.Finished || b.Total != p.Total || b.Label != fmt.Sprintf("%d/%d", p.Finished, p.Total) {
			t.Errorf("bar %s/%s shows %d/%d %q, spool has %d/%d", b.Kind, b.Name, b.Finished, b.Total, b.Label, p.Finished, p.Total)
		}
		if r := float64(p.Percent) / 100; b.Ratio < r-0.02 || b.Ratio > r+0.02 {
			t.Errorf("bar %s/%s drawn at %.2f, want %.2f", b.Kind, b.Name, b.Ratio, r)
		}
		if r := float64(failedOf[b.Kind+"/"+b.Name]) / float64(max(p.Total, 1)); b.Failed < r-0.02 || b.Failed > r+0.02 {
			t.Errorf("bar %s/%s draws %.2f red, want %.2f (its failed tasks)", b.Kind, b.Name, b.Failed, r)
		}
	}
	if len(expect) > 0 {
		t.Errorf("bars missing: %v", expect)
	}
	// Known spool: api 3/7, web 1/4, b1 3/4, b2 0/3.
	for _, b := range v.Bars {
		if b.Kind == "lane" && b.Name == "api" && b.Label != "3/7" {
			t.Errorf("api bar %q, want 3/7", b.Label)
		}
	}
	if v.Runs != 2 {
		t.Errorf("running rows %d, want 2", v.Runs)
	}
	if len(v.Held) != 1 || v.Held[0] != "held: lane paused: claims nothing new (spoolgate resume web)" {
		t.Errorf("held %q", v.Held)
	}
	if !strings.Contains(v.Text, "ETA") || !strings.Contains(v.Text, "PAUSED") {
		t.Errorf("page text lacks ETA or PAUSED:\n%s", v.Text)
	}
	cancelT()
	cancel()
	cancelA()
}
