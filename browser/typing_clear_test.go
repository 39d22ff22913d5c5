//go:build linux

package browser

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestDriver_SetTextLeftover: a composer that holds text before typing (a
// site's saved draft, an earlier attempt's leftovers) is cleared and
// checked empty first, so the field then holds exactly the task's text;
// one that will not empty fails as environment before anything is typed.
func TestDriver_SetTextLeftover(t *testing.T) {
	ctx := tab(t)
	const draft = "an old draft\nthat must not be sent 旧草稿"
	pages := map[string]string{
		"textarea":        `<textarea class="input">` + draft + `</textarea>`,
		"contenteditable": `<div class="input" contenteditable="true">` + strings.ReplaceAll(draft, "\n", "<br>") + `</div>`,
		// A controlled field that puts its draft back on every input
		// event while it is empty, as a buggy draft restore would.
		"stubborn": `<textarea class="input">` + draft + `</textarea>
<script>const el = document.querySelector('.input'); el.addEventListener('input', () => { if (el.value === '') el.value = 'draft restored'; });</script>`,
	}
	for name, body := range pages {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				fmt.Fprint(w, `<!doctype html><meta charset="utf-8">`+body+`<button type="submit">Send</button>`)
			}))
			defer srv.Close()
			lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			log := &syncBuf{}
			d := newDriver(standSite(srv.URL), "leftover", Timings{}, slogTo(log))
			if _, err := d.open(lctx); err != nil {
				t.Fatal(err)
			}
			text := "the task's own text\nline two"
			_, err := d.setText(lctx, "input", ".input", text)
			if name == "stubborn" {
				if attempt.Classify(err) != taskfile.ClassEnvironment || !strings.Contains(err.Error(), "still holds") {
					t.Fatalf("err %v, want environment: still holds text after clearing", err)
				}
				if got, _ := d.readField(lctx); strings.Contains(got, "task's own") {
					t.Fatalf("the field was typed into after it would not empty: %q", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("setText: %v\nlog:\n%s", err, log)
			}
			got, err := chromedp.Run(lctx, chromedp.Evaluate[string](`(() => {`+helpers+`return fieldText(document.querySelector('.input')); })()`))
			if err != nil {
				t.Fatal(err)
			}
			if !sameText(got, text) {
				t.Fatalf("field holds %q, want exactly %q", got, text)
			}
			if !strings.Contains(log.String(), "cleared and checked empty") {
				t.Errorf("log does not say the leftover was cleared:\n%s", log)
			}
		})
	}
}
