//go:build unix

package doors

import (
	"cmp"
	"encoding/csv"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// phoneWidth is an iPhone 12 to 15's CSS width, the phone.
const phoneWidth = 390

// TestE2E_ConsolePages is issue 53's live-update, phone, Chinese, CSV and
// screenshot acceptance through `spoolgate run` in a real headless
// Chromium: the results CSV is UTF-8 with a BOM and a content column; a host
// name being typed on the status page keeps its text (and its focus)
// across 10 s of live updates while the running task's elapsed time
// changes around it; a running task's page counts its time up without a
// reload; at 390 px no page scrolls sideways (the timeline scrolls in
// its own box); and each page is saved as a screenshot at 1280 and 390
// px wide, into $SPOOLGATE_SCREENSHOTS (`make screenshots`: ./screenshots)
// or the test's temporary folder.
func TestE2E_ConsolePages(t *testing.T) {
	t.Parallel()
	r, b := consoleRig(t, 4*time.Minute)
	r.Submit(rig.Task{ID: "written", Model: "writer", Content: "写一段春茶上新的文案", Batch: "春季"},
		rig.Task{ID: "refused", Model: "writer", Content: "[[fail=1]] 一个会失败的任务", Batch: "春季"},
		rig.Task{ID: "slow", Model: "writer", Content: "[[duration=90s]] 慢慢写一篇长文", Batch: "春季"})
	r.Final(taskfile.KindAPI, "written", time.Minute)
	r.Final(taskfile.KindAPI, "refused", time.Minute)
	r.Running(taskfile.KindAPI, "slow", time.Minute, func(*taskfile.Task) bool { return true })

	// The batch's results as a spreadsheet opens them: UTF-8 with a byte
	// order mark, the content beside the result.
	c := newConsoleClient(t, b.base)
	c.login("王芳", "王芳的密码")
	resp, body := c.get("/batch/" + url.PathEscape("春季") + "?download=csv")
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "\ufeff") || len(recs) != 4 {
		t.Fatalf("the CSV download: %d %v %.300q", resp.StatusCode, err, body)
	}
	col := slices.Index(recs[0], "content")
	if col < 0 || !slices.ContainsFunc(recs[1:], func(r []string) bool { return r[col] == "写一段春茶上新的文案" }) {
		t.Errorf("the CSV has no content column with the tasks' content: %q", recs)
	}

	// The status page: type a host name, then wait 5 updates (2 s each).
	b.do("status", chromedp.Navigate(b.base+"/"), chromedp.SendKeys(chromedp.CSS("#host-api"), "早班-主机"))
	elapsed := eval[string](b, `document.querySelector("tr.run td:nth-child(4)").textContent`)
	b.waitLive(5, 30*time.Second)
	if got := eval[string](b, `document.querySelector("tr.run td:nth-child(4)").textContent`); got == elapsed {
		t.Errorf("the running task's elapsed time stayed %q across 5 live updates", got)
	}
	if v := eval[string](b, `document.querySelector("#host-api").value`); v != "早班-主机" {
		t.Errorf("the field being typed in holds %q after 10 s of live updates", v)
	}
	if id := eval[string](b, `document.activeElement.id`); id != "host-api" {
		t.Errorf("the focus moved to %q", id)
	}

	// A running task's page counts its time up.
	b.do("task page", chromedp.Navigate(b.base+"/task/api/slow"))
	first := eval[string](b, `document.querySelector("#elapsed").textContent`)
	b.waitLive(2, 30*time.Second)
	if now := eval[string](b, `document.querySelector("#elapsed").textContent`); now == first {
		t.Errorf("the running task's page still says %q after 2 live updates", now)
	}

	// A finished task's page starts with its answer, before its fields.
	b.do("done task", chromedp.Navigate(b.base+"/task/api/written"))
	if !eval[bool](b, `!!(document.querySelector(".result").compareDocumentPosition(document.querySelector("table.fields")) & Node.DOCUMENT_POSITION_FOLLOWING)`) {
		t.Error("the task page shows its fields before its result")
	}

	// Every page at both widths: a screenshot; at phone width nothing
	// wider than the screen but the timeline, which scrolls in its box.
	dir := cmp.Or(os.Getenv("SPOOLGATE_SCREENSHOTS"), t.TempDir())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pages := []struct{ name, path string }{{"status", "/"}, {"batch", "/batch/春季"}, {"task-running", "/task/api/slow"},
		{"task-failed", "/task/api/refused"}, {"task-done", "/task/api/written"}, {"import", "/import"}, {"submit", "/submit"}}
	for _, width := range []int64{1280, phoneWidth} {
		b.do("viewport", chromedp.EmulateViewport(width, 900, chromedp.EmulateScale(1)))
		for _, p := range pages {
			b.do(p.name, chromedp.Navigate(b.base+p.path), chromedp.WaitVisible(chromedp.CSS("h1")))
			if width == phoneWidth {
				wide := eval[string](b, `document.documentElement.scrollWidth > innerWidth ? [...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest(".timeline-scroll")).slice(0, 5).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).join("; ") || "?" : ""`)
				if wide != "" {
					t.Errorf("%s at %d px scrolls sideways (%d px wide): %s", p.path, width, eval[int](b, "document.documentElement.scrollWidth"), wide)
				}
			}
			png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Join(dir, p.name+"-"+strconv.FormatInt(width, 10)+".png")
			if err := os.WriteFile(name, png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("screenshots in %s", dir)

	// In Chinese, no English word is left outside user data, ids and
	// code: what a page marks translate="no" (task ids, batch, model and
	// account names, file names, the answer, a vendor's error), <code>
	// and <pre>. testkit.ZhAllowed lists the words that stay as they are.
	inChinese(t, b)
	english := func(what string) { t.Helper(); noEnglish(t, b, what) }
	for _, p := range pages {
		b.do(p.name, chromedp.Navigate(b.base+p.path), chromedp.WaitVisible(chromedp.CSS("h1")))
		english(p.path)
	}
	// The cancel's confirmation and the flash after it.
	b.do("running task", chromedp.Navigate(b.base+"/task/api/slow"))
	b.click("cancel", "#cancel", "#confirm")
	english("the cancel's confirmation")
	b.click("confirm", "#confirm", "#flash")
	english("the page after the cancel, with its flash")
}

// inChinese has b ask every page in Chinese from now on.
func inChinese(t *testing.T, b *chrome) {
	t.Helper()
	if _, err := chromedp.Call(b.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": "zh-CN,zh;q=0.9"}}); err != nil {
		t.Fatal(err)
	}
}

// noEnglish fails t if the page b shows has English outside user data,
// ids and code (testkit.ZhText, testkit.EnglishWords).
func noEnglish(t *testing.T, b *chrome, what string) {
	t.Helper()
	if left := testkit.EnglishWords(eval[string](b, testkit.ZhText)); len(left) > 0 {
		t.Errorf("%s in Chinese shows English: %q", what, left)
	}
}
