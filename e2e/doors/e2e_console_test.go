//go:build unix

package doors

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/simplifiedchinese"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/doors/console"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TestE2E_Console is issue 40's acceptance: in a real headless Chromium
// against `spoolgate run` on 127.0.0.1, an operator logs in, submits a
// task from the form, imports a 40-row XLSX and a GB18030 CSV through a
// template (the invalid rows listed by number, a second upload refused
// as duplicates), cancels one task, retries a failed one, pauses and
// resumes the web lane, and logs out, after which every action is
// refused. Every action is in the audit trail, sealed.
func TestE2E_Console(t *testing.T) {
	t.Parallel()
	chromium := testkit.NeedChromium(t)
	api := rig.APIStand(t, apistand.Options{})
	hash, err := console.HashPassword("王芳的密码")
	if err != nil {
		t.Fatal(err)
	}
	tail := fmt.Sprintf(`models:
  - {name: writer, kind: api, baseURL: %q, model: stand-in, timeout: 10s}
console:
  users:
    王芳: %q
`, api.URL(), hash)
	r := rig.New(t, rig.Opts{Tail: tail, HTTP: "127.0.0.1:0", Retries0: true})
	d := r.Start()
	base := rig.StatusURL(t, d)

	// The tables, as an operator's Excel saves them.
	dir := t.TempDir()
	xlsxPath := filepath.Join(dir, "选题.xlsx")
	xf := excelize.NewFile()
	_ = xf.SetSheetRow("Sheet1", "A1", &[]any{"channel", "topic"})
	for i := 2; i <= 41; i++ {
		_ = xf.SetSheetRow("Sheet1", fmt.Sprintf("A%d", i), &[]any{fmt.Sprintf("channel %d", i), fmt.Sprintf("topic %d", i)})
	}
	if err := xf.SaveAs(xlsxPath); err != nil {
		t.Fatal(err)
	}
	xf.Close()
	csvText := "channel,topic,tone\n公众号,春茶上新,轻松\n微博,秋季新品,正式\n抖音,,活泼\n小红书,新品试用,\n知乎,茶叶知识,专业\n"
	gb, _ := simplifiedchinese.GB18030.NewEncoder().Bytes([]byte(csvText))
	csvPath := filepath.Join(dir, "spring.csv")
	if err := os.WriteFile(csvPath, gb, 0o600); err != nil {
		t.Fatal(err)
	}

	actx, cancelA := chromedp.NewExecAllocator(context.Background(), testkit.ChromiumOptions(t, chromium)...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 4*time.Minute)
	defer cancelT()
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, testkit.Tail(d.LogText(), 30))
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	html := func() string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.documentElement.outerHTML"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// click submits a form and waits for the page it leads to.
	click := func(what, sel, next string) {
		t.Helper()
		do(what, chromedp.Evaluate[chromedp.Void]("document.querySelector('#flash')?.remove(); document.body.dataset.old='1'; undefined"),
			chromedp.Click(chromedp.CSS(sel)))
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(cctx, chromedp.WaitVisible(chromedp.CSS("body:not([data-old]) "+next))); err != nil {
			t.Fatalf("%s: %s not shown: %v\n%s\n%s", what, next, err, html(), testkit.Tail(d.LogText(), 30))
		}
	}

	// Log in.
	do("login", chromedp.Navigate(base+"/login"), chromedp.SetValue(chromedp.CSS("#user"), "王芳"), chromedp.SetValue(chromedp.CSS("#password"), "王芳的密码"))
	click("login", "#login", "#logout")

	// One task from the form.
	do("submit form", chromedp.Navigate(base+"/submit"), chromedp.SetValue(chromedp.CSS("#model"), "writer"),
		chromedp.SetValue(chromedp.CSS("#content"), "hello from the form"), chromedp.SetValue(chromedp.CSS("#taskId"), "from-form"))
	click("submit", "#submit", "#flash")
	if f := text("#flash"); !strings.Contains(f, "api/from-form") {
		t.Fatalf("flash %q", f)
	}
	if got := r.Final(taskfile.KindAPI, "from-form", time.Minute); got.State != taskfile.StateSuccess || got.Result != "Answer: hello from the form" {
		t.Fatalf("from-form: %s %q", got.State, got.Result)
	}

	// importTable uploads a table and returns the preview page.
	importTable := func(path, batch, tmpl string) string {
		t.Helper()
		do("import form", chromedp.Navigate(base+"/import"), chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{path}),
			chromedp.SetValue(chromedp.CSS("#batch"), batch), chromedp.SetValue(chromedp.CSS("#template"), tmpl), chromedp.SetValue(chromedp.CSS("#model"), "writer"))
		click("preview", "#preview", "h1")
		return html()
	}
	page := importTable(xlsxPath, "xl40", "Write about {{topic}} for {{channel}}")
	if !strings.Contains(page, "submit 40 valid rows as batch xl40") || strings.Contains(page, `class="row-error"`) {
		t.Fatalf("xlsx preview:\n%s", page)
	}
	click("import xlsx", "#import-submit", "#flash")
	for i := 2; i <= 41; i++ {
		id := actions.RowTaskID("xl40", i)
		got := r.Final(taskfile.KindAPI, id, time.Minute)
		if want := fmt.Sprintf("Write about topic %d for channel %d", i, i); got.State != taskfile.StateSuccess || got.Content != want || got.Batch != "xl40" {
			t.Fatalf("%s: %s %q (want %q)", id, got.State, got.Content, want)
		}
	}
	const tmplZH = "为{{channel}}写一篇关于{{topic}}的稿子，语气{{tone}}"
	page = importTable(csvPath, "春季选题", tmplZH)
	rowErr := regexp.MustCompile(`class="row-error" data-row="(\d+)"`)
	if m := rowErr.FindAllStringSubmatch(page, -1); len(m) != 2 || m[0][1] != "4" || m[1][1] != "5" || !strings.Contains(page, "csv gb18030") {
		t.Fatalf("csv preview: row errors %v\n%s", m, page)
	}
	click("import csv", "#import-submit", "#flash")
	for n, want := range map[int]string{2: "为公众号写一篇关于春茶上新的稿子，语气轻松", 3: "为微博写一篇关于秋季新品的稿子，语气正式", 6: "为知乎写一篇关于茶叶知识的稿子，语气专业"} {
		id := actions.RowTaskID("春季选题", n)
		if got := r.Final(taskfile.KindAPI, id, time.Minute); got.Content != want || got.State != taskfile.StateSuccess {
			t.Fatalf("%s: %s %q", id, got.State, got.Content)
		}
	}
	// The same tables again: every row refused as a duplicate.
	for _, tc := range []struct{ path, batch, tmpl string }{{csvPath, "春季选题", tmplZH}, {xlsxPath, "xl40", "Write about {{topic}} for {{channel}}"}} {
		page = importTable(tc.path, tc.batch, tc.tmpl)
		if !strings.Contains(page, "no valid rows") || strings.Contains(page, `id="import-submit"`) {
			t.Fatalf("second upload of %s:\n%s", tc.path, page)
		}
	}
	if ents, _ := os.ReadDir(r.L.Lane(taskfile.KindAPI, taskfile.DirIncoming)); len(ents) != 0 {
		t.Fatalf("a second upload dropped %d files", len(ents))
	}

	// Retry a failed task from its page.
	r.Submit(rig.Task{ID: "flaky", Model: "writer", Content: "[[fail=1]] flaky"})
	if got := r.Final(taskfile.KindAPI, "flaky", time.Minute); got.State != taskfile.StateFailed {
		t.Fatalf("flaky: %s", got.State)
	}
	do("flaky page", chromedp.Navigate(base+"/task/api/flaky"))
	click("retry", "#retry", "#flash")
	testkit.Wait(t, "flaky to run again and succeed", time.Minute, func() bool { return r.L.Locate(taskfile.KindAPI, "flaky") == taskfile.DirDone })

	// Pause the API lane, so a task waits; cancel it from its page.
	do("status", chromedp.Navigate(base+"/"))
	click("pause api", "#pause-api", "#flash")
	r.Submit(rig.Task{ID: "waiter", Model: "writer", Content: "waits"})
	testkit.Wait(t, "waiter pending", 30*time.Second, func() bool { return r.L.Locate(taskfile.KindAPI, "waiter") == taskfile.DirPending })
	do("waiter page", chromedp.Navigate(base+"/task/api/waiter"))
	click("cancel", "#cancel", "#confirm") // a confirmation first, naming the task
	if page := html(); !strings.Contains(page, `data-ref="api/waiter"`) || r.L.Locate(taskfile.KindAPI, "waiter") != taskfile.DirPending {
		t.Fatalf("the cancel's confirmation:\n%s", page)
	}
	click("confirm cancel", "#confirm", "#flash")
	if got := r.Final(taskfile.KindAPI, "waiter", 30*time.Second); got.State != taskfile.StateCanceled {
		t.Fatalf("waiter: %s", got.State)
	}
	do("status", chromedp.Navigate(base+"/"))
	click("resume api", "#resume-api", "#flash")
	// Pause and resume the web lane.
	for _, step := range []struct {
		button string
		paused bool
	}{{"#pause-web", true}, {"#resume-web", false}} {
		do("status", chromedp.Navigate(base+"/"))
		click(step.button, step.button, "#flash")
		if _, err := os.Stat(r.L.Paused(taskfile.KindWeb)); (err == nil) != step.paused {
			t.Fatalf("after %s: web/paused exists: %v", step.button, err == nil)
		}
	}
	do("waiter page", chromedp.Navigate(base+"/task/api/waiter"))
	if page := html(); !strings.Contains(page, `cancel requested by <span class="who" translate="no">王芳</span> at `) {
		t.Errorf("the task page does not say who canceled it:\n%s", page)
	}

	// Log out; the old session and token can do nothing.
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil || len(res.Cookies) == 0 {
		t.Fatalf("cookies: %v %v", res, err)
	}
	cookies := res.Cookies
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(html())
	click("logout", "#logout", "button#login") // the pages need a login: back to the login page (issue 50)
	if page := html(); strings.Contains(page, `action="/action"`) || strings.Contains(page, "cancel requested by") {
		t.Error("actions or audit lines on the page after logout")
	}
	r.Submit(rig.Task{ID: "after", Model: "writer", Content: "[[fail=1]] after logout"})
	r.Final(taskfile.KindAPI, "after", time.Minute)
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, form := range []url.Values{
		{"do": {"retry"}, "lane": {"api"}, "id": {"after"}},
		{"do": {"pause"}, "lane": {"api"}},
		{"do": {"retry-failed"}, "batch": {"xl40"}, "confirm": {"yes"}},
	} {
		form.Set("csrf", csrf[1])
		req, _ := http.NewRequest(http.MethodPost, base+"/action", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", base)
		for _, ck := range cookies {
			req.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s after logout: %d", form.Get("do"), resp.StatusCode)
		}
	}
	if r.L.Locate(taskfile.KindAPI, "after") != taskfile.DirFailed {
		t.Error("retried after logout")
	}
	if _, err := os.Stat(r.L.Paused(taskfile.KindAPI)); err == nil {
		t.Error("paused after logout")
	}

	// The audit trail: every action, each line sealed by the daemon.
	st := r.Store()
	es, err := st.Audit(time.Now(), func(spool.AuditEntry) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	cli := 0 // the test's own `spoolgate submit`s, audited as the command line's
	for _, e := range es {
		if e.Door == spool.DoorCLI && e.Action == "submit" && e.Foreign == "" && strings.Contains(e.User, "@") {
			cli++
			continue
		}
		if e.Foreign != "" || e.User != "王芳" || e.Remote != "127.0.0.1" {
			t.Errorf("audit line %+v", e)
		}
		got = append(got, e.Action)
	}
	if cli == 0 {
		t.Error("no command-line submit in the audit trail")
	}
	if want := "login submit import import retry pause cancel resume pause resume logout"; strings.Join(got, " ") != want {
		t.Errorf("audit actions %q, want %q", strings.Join(got, " "), want)
	}
	data, _ := os.ReadFile(filepath.Join(r.Cfg.Spool, spool.AuditDir, time.Now().UTC().Format("2006-01")+".log"))
	if n := bytes.Count(data, []byte("\n")); n != len(got)+cli {
		t.Errorf("%d lines in the audit file, %d entries", n, len(got)+cli)
	}
}
