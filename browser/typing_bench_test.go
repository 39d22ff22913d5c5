//go:build linux

package browser

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/examples/chatstand"
)

// BenchmarkTyping puts the 20,000-character brief into each kind of field
// by the driver's method (lines: Input.insertText per line, Shift+Enter
// between), and, as the baseline of the same run, by key events (a
// key-down carrying the character and a key-up for every character, as
// typing by keyboard does). Each op is one whole brief typed and checked;
// run with -benchtime=1x:
//
//	go test -run '^$' -bench Typing -benchtime=1x ./browser
func BenchmarkTyping(b *testing.B) {
	ctx := tab(b)
	text := chatstand.Brief(20000)
	for _, kind := range []string{"textarea", "contenteditable", "prosemirror", "lexical", "quill"} {
		stand, err := chatstand.Start(chatstand.Options{Scale: 0.001, Input: kind})
		if err != nil {
			b.Fatal(err)
		}
		lctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
		if err := chromedp.Do(lctx, chromedp.Navigate(stand.URL()+"login?user=demo")); err != nil {
			b.Fatal(err)
		}
		for _, method := range []string{"lines", "keys"} {
			b.Run(kind+"/"+method, func(b *testing.B) {
				for range b.N {
					d := newDriver(standSite(stand.URL()), "standin", Timings{}, nil)
					if _, err := d.open(lctx); err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					if method == "lines" {
						if _, err := d.setText(lctx, "input", ".input", text); err != nil {
							b.Fatal(err)
						}
					} else {
						if _, err := d.focusField(lctx, ".input"); err != nil {
							b.Fatal(err)
						}
						if err := d.typeKeys(lctx, text); err != nil {
							b.Fatal(err)
						}
						got, err := d.readField(lctx)
						if err != nil || !sameText(got, text) {
							b.Fatalf("key events: %v; %s", err, firstDiff(got, text))
						}
					}
					b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/brief")
				}
			})
		}
		cancel()
		_ = stand.Close()
	}
}

// typeKeys types text one key event pair per character: the baseline.
func (d *driver) typeKeys(ctx context.Context, text string) error {
	for _, r := range text {
		var err error
		if r == '\n' {
			err = d.key(ctx, "Enter", "Enter", 13, "\r", modShift)
		} else {
			s := string(r)
			err = d.key(ctx, s, "", 0, s, 0)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
