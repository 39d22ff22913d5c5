//go:build unix

package doors

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/doors/console"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// chrome is one headless Chromium on a console: steps that fail the
// test with the daemon's log, and a click that waits for the next page.
type chrome struct {
	t    *testing.T
	ctx  context.Context
	d    *rig.Daemon
	base string
}

func newChrome(t *testing.T, d *rig.Daemon, base string, within time.Duration) *chrome {
	t.Helper()
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), testkit.ChromiumOptions(t, testkit.NeedChromium(t))...)
	t.Cleanup(cancelA)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, within)
	t.Cleanup(cancelT)
	return &chrome{t: t, ctx: ctx, d: d, base: base}
}

func (b *chrome) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, testkit.Tail(b.d.LogText(), 30))
	}
}

// eval runs a script whose value is a T.
func eval[T any](b *chrome, js string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return v
}

func (b *chrome) html() string { return eval[string](b, "document.documentElement.outerHTML") }

// click presses sel and waits for the page it leads to to show next.
func (b *chrome) click(what, sel, next string) {
	b.t.Helper()
	b.do(what, chromedp.Evaluate[chromedp.Void]("document.querySelector('#flash')?.remove(); document.body.dataset.old='1'; undefined"),
		chromedp.Click(chromedp.CSS(sel)))
	cctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(cctx, chromedp.WaitVisible(chromedp.CSS("body:not([data-old]) "+next))); err != nil {
		b.t.Fatalf("%s: %s not shown: %v\n%s\n%s", what, next, err, b.html(), testkit.Tail(b.d.LogText(), 30))
	}
}

// liveCount is how many live updates console.js has swapped in.
func (b *chrome) liveCount() int {
	n, _ := strconv.Atoi(eval[string](b, "document.documentElement.dataset.liveCount || '0'"))
	return n
}

// waitLive waits for n more live updates of the page.
func (b *chrome) waitLive(n int, within time.Duration) {
	b.t.Helper()
	from := b.liveCount()
	testkit.Wait(b.t, fmt.Sprintf("%d live updates", n), within, func() bool { return b.liveCount() >= from+n })
}

// consoleRig is `spoolgate run` with an API model and the console user
// 王芳, logged in from a headless Chromium.
func consoleRig(t *testing.T, within time.Duration) (*rig.Rig, *chrome) {
	t.Helper()
	api := rig.APIStand(t, apistand.Options{})
	hash, err := console.HashPassword("王芳的密码")
	if err != nil {
		t.Fatal(err)
	}
	tail := fmt.Sprintf("models:\n  - {name: writer, kind: api, baseURL: %q, model: stand-in, timeout: 60s}\nconsole:\n  users:\n    王芳: %q\n", api.URL(), hash)
	r := rig.New(t, rig.Opts{Tail: tail, HTTP: "127.0.0.1:0", Retries0: true})
	d := r.Start()
	b := newChrome(t, d, rig.StatusURL(t, d), within)
	b.do("login", chromedp.Navigate(b.base+"/login"), chromedp.SetValue(chromedp.CSS("#user"), "王芳"), chromedp.SetValue(chromedp.CSS("#password"), "王芳的密码"))
	b.click("login", "#login", "#logout")
	return r, b
}

// TestE2E_ConsoleBatch is issue 53's batch acceptance through `spoolgate
// run` in a real headless Chromium: a 30-row import (its lane paused)
// whose batch page lists 30 rows named by their key columns (each pending
// one saying it waits for the paused lane), filters by
// state, and cancels 5 ticked pending tasks after a confirmation page
// that names them, in one audit line; the ticked boxes survive the
// page's live updates meanwhile.
func TestE2E_ConsoleBatch(t *testing.T) {
	t.Parallel()
	r, b := consoleRig(t, 4*time.Minute)
	st := r.Store()
	file, err := actions.PauseFile(st, taskfile.KindAPI, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := actions.Pause(st, file, "the test", time.Now()); err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	csv.WriteString("channel,topic\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&csv, "公众号,选题%02d\n", i)
	}
	path := filepath.Join(t.TempDir(), "三十行.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	const batch = "三十行"
	b.do("import form", chromedp.Navigate(b.base+"/import"), chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{path}),
		chromedp.SetValue(chromedp.CSS("#batch"), batch), chromedp.SetValue(chromedp.CSS("#template"), "为{{channel}}写{{topic}}"),
		chromedp.SetValue(chromedp.CSS("#model"), "writer"))
	b.click("preview", "#preview", "h1")
	b.click("import", "#import-submit", "#flash")
	if href := eval[string](b, `document.querySelector("#flash-link")?.getAttribute("href") || ""`); href != "/batch/"+url.PathEscape(batch) {
		t.Errorf("the import's flash links to %q, not to its batch", href)
	}
	testkit.Wait(t, "30 pending tasks", time.Minute, func() bool {
		ents, _ := os.ReadDir(r.L.Lane(taskfile.KindAPI, taskfile.DirPending))
		return len(ents) == 30
	})

	// 30 rows, each named by its content; the pending filter lists them
	// in the lane's order.
	b.do("batch page", chromedp.Navigate(b.base+"/batch/"+batch))
	names := eval[[]string](b, `[...document.querySelectorAll("tr.batch-task td:nth-child(3) a")].map(a => a.textContent)`)
	if len(names) != 30 || names[0] != "公众号 · 选题01" || names[29] != "公众号 · 选题30" {
		t.Fatalf("the batch page lists %d rows: %q", len(names), names)
	}
	if why := eval[string](b, `document.querySelector("tr.batch-task[data-state=pending] td:last-child").textContent`); why != "waits: its lane is paused" {
		t.Errorf("a pending row of the paused lane says why it waits: %q", why)
	}
	b.click("pending filter", `a.filter[href*="state=pending"]`, "tr.batch-task")
	if n := eval[int](b, `document.querySelectorAll("tr.batch-task[data-state=pending]").length`); n != 30 {
		t.Fatalf("the pending filter lists %d rows", n)
	}

	// Tick five; they stay ticked across live updates (every 5 s) while
	// a 31st task joins the batch: the counts show it, the ticked list
	// is left as it is.
	ticked := eval[[]string](b, `[...document.querySelectorAll("tr.batch-task input[type=checkbox]")].slice(0,5).map(c => (c.click(), c.value))`)
	r.Submit(rig.Task{ID: "late", Model: "writer", Content: "一个迟到的任务", Batch: batch})
	testkit.Wait(t, "the live counts to show a 31st task", 30*time.Second, func() bool {
		return strings.Contains(eval[string](b, `document.querySelector("[data-live=filters]").textContent`), "31")
	})
	b.waitLive(1, 30*time.Second)
	if n := eval[int](b, `document.querySelectorAll("tr.batch-task input:checked").length`); n != 5 {
		t.Fatalf("after live updates %d boxes are ticked, want 5", n)
	}
	b.click("bulk cancel", "#bulk-cancel", "#confirm")
	steps := eval[[]string](b, `[...document.querySelectorAll("li.bulk-step")].map(li => li.dataset.ref + " " + li.textContent)`)
	if len(steps) != 5 || !strings.Contains(steps[0], "公众号 · 选题01") || !strings.Contains(b.html(), "5 of 5 will be done") {
		t.Fatalf("the confirmation lists %q\n%s", steps, b.html())
	}
	for i, id := range ticked {
		if !strings.HasPrefix(steps[i], id+" ") {
			t.Errorf("confirmation step %d is %q, ticked %s", i, steps[i], id)
		}
	}
	if got := r.L.Locate(taskfile.KindAPI, actions.RowTaskID(batch, 2)); got != taskfile.DirPending {
		t.Fatalf("before the confirmation the first task is %s", got)
	}
	b.click("confirm", "#confirm", "#flash")
	if f := eval[string](b, `document.querySelector("#flash").textContent`); !strings.Contains(f, "5 of 5") {
		t.Errorf("flash %q", f)
	}
	for _, ref := range ticked {
		id := strings.TrimPrefix(ref, "api/")
		if got := r.Final(taskfile.KindAPI, id, 30*time.Second); got.State != taskfile.StateCanceled {
			t.Errorf("%s: %s", ref, got.State)
		}
	}
	b.do("canceled filter", chromedp.Navigate(b.base+"/batch/"+batch+"?state=canceled"))
	if n := eval[int](b, `document.querySelectorAll("tr.batch-task[data-state=canceled]").length`); n != 5 {
		t.Errorf("the canceled filter lists %d rows", n)
	}
	if ents, _ := os.ReadDir(r.L.Lane(taskfile.KindAPI, taskfile.DirPending)); len(ents) != 26 {
		t.Errorf("%d pending after the cancel, want 26", len(ents))
	}
	es, err := st.AuditOf(time.Now(), "", batch)
	if err != nil {
		t.Fatal(err)
	}
	var cancels []spool.AuditEntry
	for _, e := range es {
		if e.Action == "cancel" {
			cancels = append(cancels, e)
		}
	}
	if len(cancels) != 1 || cancels[0].User != "王芳" || !slices.Equal(cancels[0].Tasks, ticked) || cancels[0].Detail != "bulk: 5 of 5" {
		t.Errorf("the audit trail's cancels: %+v", cancels)
	}

	// In Chinese: the status page says the lane is paused and how to
	// resume it; a pending task's page gives its place in the queue and
	// why it waits; neither shows English outside data and code.
	inChinese(t, b)
	b.do("status in Chinese", chromedp.Navigate(b.base+"/"), chromedp.WaitVisible(chromedp.CSS("h1")))
	if held := eval[string](b, `document.querySelector("section .held[data-kind=paused]")?.textContent || ""`); !strings.Contains(held, "通道已暂停：不再领取新任务") {
		t.Errorf("the paused lane's held line in Chinese: %q", held)
	}
	noEnglish(t, b, "the status page of a paused lane")
	// The first of the batch's pending list is the first of its lane.
	b.do("pending list", chromedp.Navigate(b.base+"/batch/"+batch+"?state=pending"), chromedp.WaitVisible(chromedp.CSS("tr.batch-task")))
	first := eval[string](b, `document.querySelector("tr.batch-task td:nth-child(3) a").getAttribute("href")`)
	b.do("pending task in Chinese", chromedp.Navigate(b.base+first), chromedp.WaitVisible(chromedp.CSS("h1")))
	fields := eval[string](b, `document.querySelector("table.fields").textContent`)
	if !strings.Contains(fields, "排队位置第 1 位，共 26 个") || !strings.Contains(fields, "等待原因等待：所在通道已暂停") {
		t.Errorf("the pending task's page does not say its place and why it waits: %q", fields)
	}
	noEnglish(t, b, "a pending task's page")
}
