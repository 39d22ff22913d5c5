//go:build linux

package doors

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/doors/cli"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/status/timeline"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// e2eMarkdown is the API stand-in's answer to a task that asks for it: a
// heading, a list, a table and a code block.
const e2eMarkdown = "# Launch plan\n\nThe steps:\n\n- write the brief\n- review it\n\n| lane | time |\n|------|-----:|\n| web | 31 s |\n| api | 8 s |\n\n```go\nfunc main() {}\n```\n"

// e2eHostileAnswer is an answer that tries to run script on the task page.
const e2eHostileAnswer = "## Hi\n\n<script>alert('result')</script>\n\n<img src=x onerror=\"alert('img')\">\n\n[click](javascript:alert('link')) [rel](/etc/passwd) <iframe src=\"https://example.com\"></iframe>\n"

// hostileBatch is a batch name that tries to inject markup everywhere it is shown.
const hostileBatch = `<script>alert('batch')</script><img src=x onerror=alert(1)>`

// Issue 22's acceptance through `spoolgate run` with real headless
// Chromium: a batch on both lanes and two web sessions, with a retried
// task, a failed web task with its screenshots, an account held by a
// usage limit and a paused lane. The status page's timeline has one row
// per API slot and per session, and its bars are the attempts that the
// task files record, each in its row and colour; `status --timeline`
// draws the same bars. The failed web task's page shows its screenshots, a
// successful task's Markdown is rendered. Then the XSS and traversal
// suite: nothing executes, nothing outside the spool is served.
func TestE2E_Timeline(t *testing.T) {
	t.Parallel()
	const scale = 0.01
	chromium := testkit.NeedChromium(t)
	if _, err := browser.FindBrowser(&config.Config{}); err != nil {
		t.Skipf("no browser: %v", err)
	}
	chat, err := chatstand.Start(chatstand.Options{Scale: scale})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = chat.Close() })
	api := rig.APIStand(t, apistand.Options{Answer: func(user string) (string, bool) {
		switch {
		case strings.Contains(user, "markdown please"):
			return e2eMarkdown, true
		case strings.Contains(user, "hostile please"):
			return e2eHostileAnswer, true
		}
		return "", false
	}})
	tail := fmt.Sprintf(`models:
  - {name: writer, kind: api, baseURL: %q, model: stand-in, timeout: 10s}
  - {name: chat-web, kind: web, site: standin, needEmptyPrompt: true}
sites:
%s    limited: ".limit"
accounts:
  a1: {site: standin}
  a2: {site: standin}
`, api.URL(), testkit.StandinSite(chat.URL()))
	r := rig.New(t, rig.Opts{Tail: tail, APIConc: 2, HTTP: "127.0.0.1:0", Heartbeat: 500 * time.Millisecond, StaleAfter: 3 * time.Second},
		cli.HoldScaleEnv+"=0.1") // the page's "try again in 20 seconds" holds the account 2 s
	for _, s := range r.Cfg.WebSessions() {
		t.Cleanup(func() { testkit.NoProcs(t, s.Profile) })
		rig.LoginAs(t, r.Cfg, s.Profile, chat.URL(), s.Account)
	}

	// A pause from before the batch, ended while it waits: a shaded span.
	r.CLI("pause", "api")
	begun := time.Now()
	d := r.Start()
	base := rig.StatusURL(t, d)
	const batch = "launch"
	tasks := []rig.Task{
		{ID: "md", Model: "writer", Batch: batch, Content: "[[duration=1500ms]] markdown please"},
		{ID: "retry", Model: "writer", Batch: batch, Content: "[[fail=1]] [[duration=1s]] retried once"},
		{ID: "api3", Model: "writer", Batch: batch, Content: "[[duration=1200ms]] three"},
		{ID: "api4", Model: "writer", Batch: batch, Content: "[[duration=900ms]] four"},
		{ID: "xss", Model: "writer", Batch: hostileBatch, Content: "hostile please"},
		{ID: "w-ok1", Model: "chat-web", Batch: batch, Content: "[[duration=150s]] first web"},
		{ID: "w-ok2", Model: "chat-web", Batch: batch, Content: "[[duration=120s]] second web"},
		{ID: "w-fail", Model: "chat-web", Batch: batch, Content: "[[fail=9]] [[duration=50s]] fails every time"},
		{ID: "w-limit", Model: "chat-web", Batch: batch, Content: "[[limit]] meets the usage limit"},
	}
	r.Submit(tasks...)
	testkit.Wait(t, "a web attempt", 30*time.Second, func() bool {
		ents, _ := os.ReadDir(r.L.Lane(taskfile.KindWeb, taskfile.DirRunning))
		return len(ents) > 0
	})

	r.CLI("resume", "api")
	// The usage limit holds an account; its task then waits: cancel it.
	testkit.Wait(t, "the account hold", 60*time.Second, func() bool {
		m, _ := filepath.Glob(filepath.Join(r.L.Accounts(), "*.held"))
		return len(m) > 0
	})

	testkit.Wait(t, "w-limit back in pending", 30*time.Second, func() bool { return r.L.Locate(taskfile.KindWeb, "w-limit") == taskfile.DirPending })
	r.CLI("cancel", "web/w-limit")
	for _, tk := range tasks {
		k := taskfile.KindAPI
		if tk.Model == "chat-web" {
			k = taskfile.KindWeb
		}
		got := r.Final(k, tk.ID, 3*time.Minute)
		want := taskfile.StateSuccess
		switch tk.ID {
		case "w-fail":
			want = taskfile.StateFailed
		case "w-limit":
			want = taskfile.StateCanceled
		}
		if got.State != want {
			t.Errorf("%s: %s, want %s (%s)", tk.ID, got.State, want, got.Error)
		}
	}

	// What the task files record: every attempt, its outcome and session.
	type bar struct {
		task    string
		attempt int
		outcome string
	}
	want := map[bar]int{}
	webRow := map[bar]string{}
	var apiRecs []taskfile.AttemptRecord
	outcomes := map[string]int{}
	for _, k := range taskfile.Kinds {
		for _, dir := range taskfile.FinalDirs {
			ents, _ := os.ReadDir(r.L.Lane(k, dir))
			for _, e := range ents {
				if !strings.HasSuffix(e.Name(), ".yaml") {
					continue
				}
				tk := r.Read(k, dir, strings.TrimSuffix(e.Name(), ".yaml"))
				for _, a := range tk.Attempts {
					b := bar{tk.TaskID, a.N, a.Outcome}
					want[b]++
					outcomes[a.Outcome]++
					if k == taskfile.KindWeb {
						webRow[b] = "web/" + a.Account
					} else {
						apiRecs = append(apiRecs, a)
					}
				}
			}
		}
	}
	for _, o := range []string{"success", "retried", "failed", "held"} {
		if outcomes[o] == 0 {
			t.Errorf("no %s attempt recorded: %v", o, outcomes)
		}
	}
	check := func(where string, got []svgBar, rows []string) {
		t.Helper()
		if strings.Join(rows, " ") != "api/1 api/2 web/a1 web/a2" {
			t.Errorf("%s: rows %v, want one per API slot (2) and per session (a1, a2)", where, rows)
		}
		seen := map[bar]int{}
		byRow := map[string][]svgBar{}
		for _, g := range got {
			b := bar{g.Task, g.Attempt, g.Outcome}
			seen[b] += g.N
			if g.Fill != "" && g.Fill != timeline.Colour(timeline.Outcome(g.Outcome)) {
				t.Errorf("%s: bar %v drawn %s, want %s", where, b, g.Fill, timeline.Colour(timeline.Outcome(g.Outcome)))
			}
			if row, ok := webRow[b]; ok && g.Row != row {
				t.Errorf("%s: bar %v in row %s, its attempt ran on %s", where, b, g.Row, row)
			}
			if g.Lane == "api" {
				byRow[g.Row] = append(byRow[g.Row], g)
			}
		}
		if fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Errorf("%s: bars %v\nthe task files' attempts %v", where, seen, want)
		}
		// Each API bar is a recorded attempt, and two attempts of one row
		// never overlap: a row is a slot.
		for row, bs := range byRow {
			slices.SortFunc(bs, func(x, y svgBar) int { return strings.Compare(x.Start, y.Start) })
			for i, b := range bs {
				if !slices.ContainsFunc(apiRecs, func(a taskfile.AttemptRecord) bool {
					return a.N == b.Attempt && a.Outcome == b.Outcome && stampOf(a.ClaimedAt) == b.Start && stampOf(a.EndedAt) == b.End
				}) {
					t.Errorf("%s: bar %+v is no recorded attempt", where, b)
				}
				if i > 0 && b.Start < bs[i-1].End {
					t.Errorf("%s: row %s holds overlapping attempts %+v and %+v", where, row, bs[i-1], b)
				}
			}
		}
	}

	// `status --timeline` draws the same bars.
	svgFile := filepath.Join(r.Dir, "timeline.svg")
	// The span of the test: no two attempts fall in one pixel.
	since := fmt.Sprintf("%ds", int(time.Since(begun).Seconds())+5)
	r.CLI("status", "--timeline", svgFile, "--since", since)
	data, err := os.ReadFile(svgFile)
	if err != nil {
		t.Fatal(err)
	}
	fileBars, fileRows := parseSVGBars(t, string(data))
	if dir := os.Getenv("SPOOLGATE_SHOTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "timeline.svg"), data, 0o644)
	}
	check("status --timeline", fileBars, fileRows)

	shots := os.Getenv("SPOOLGATE_SHOTS") // where a person may look at the screenshots
	if shots == "" {
		shots = t.TempDir()
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), testkit.ChromiumOptions(t, chromium)...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	defer cancelT()
	var dialogs atomic.Int32
	if err := chromedp.Listen(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	load := func(url string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
			t.Fatalf("navigate %s: %v", url, err)
		}
	}
	eval := func(js string, out any) {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string]("JSON.stringify("+js+")"))
		if err != nil {
			t.Fatalf("evaluate: %v", err)
		}
		if err := json.Unmarshal([]byte(v), out); err != nil {
			t.Fatalf("%v: %s", err, v)
		}
	}
	load(base + "/?since=" + since)
	var page1 struct {
		Bars    []svgBar
		Rows    []string
		Scripts int
	}
	eval(`({bars: Array.from(document.querySelectorAll('svg.timeline rect.tl-bar')).map(b => ({task: b.dataset.task, attempt: +b.dataset.attempt, outcome: b.dataset.outcome, row: b.dataset.row, lane: b.dataset.lane, n: +b.dataset.n, fill: b.getAttribute('fill'), start: b.dataset.start, end: b.dataset.end})),
	 rows: Array.from(document.querySelectorAll('svg.timeline g.tl-row')).map(g => g.dataset.row), scripts: Array.from(document.scripts).filter(s => s.getAttribute('src') !== '/console.js').length})`, &page1)
	check("status page", page1.Bars, page1.Rows)
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shots, "status-page.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}

	// The failed web task's page shows its screenshots.
	load(base + "/task/web/w-fail")
	var fail struct{ Imgs, Loaded, Attempts int }
	eval(`({imgs: document.querySelectorAll('figure.shot img').length, loaded: Array.from(document.querySelectorAll('figure.shot img')).filter(i => i.complete && i.naturalWidth > 0).length, attempts: document.querySelectorAll('tr.attempt').length})`, &fail)
	if fail.Imgs == 0 || fail.Loaded != fail.Imgs || fail.Attempts != 3 {
		t.Errorf("failed web task's page: %+v, want its screenshots shown and 3 attempts", fail)
	}
	png, _ = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	_ = os.WriteFile(filepath.Join(shots, "task-failed.png"), png, 0o644)
	// A successful task's Markdown, rendered beside its source.
	load(base + "/task/api/md")
	var md struct{ H1, Li, Table, Code, Source int }
	eval(`({h1: document.querySelectorAll('.md h1').length, li: document.querySelectorAll('.md ul > li').length, table: document.querySelectorAll('.md table td').length, code: document.querySelectorAll('.md pre > code').length, source: document.querySelectorAll('.source pre').length})`, &md)
	if md.H1 != 1 || md.Li != 2 || md.Table != 4 || md.Code != 1 || md.Source != 1 {
		t.Errorf("rendered Markdown: %+v, want a heading, 2 list items, a 2x2 table, a code block, and the source", md)
	}
	png, _ = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	_ = os.WriteFile(filepath.Join(shots, "task-markdown.png"), png, 0o644)
	load(base + "/batch/" + batch)
	var bp struct{ Bars, Failures, Lanes int }
	eval(`({bars: document.querySelectorAll('svg.timeline rect.tl-bar').length, failures: document.querySelectorAll('tr.failure').length, lanes: document.querySelectorAll('tr.batch-lane').length})`, &bp)
	if bp.Bars == 0 || bp.Failures != 1 || bp.Lanes != 2 {
		t.Errorf("batch page: %+v, want its timeline, 1 failure, 2 lanes", bp)
	}
	png, _ = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	_ = os.WriteFile(filepath.Join(shots, "batch.png"), png, 0o644)
	// The batch's downloads are `spoolgate results`'s bytes, the CSV with
	// a byte order mark in front (for Excel in a Chinese locale).
	for _, f := range []string{"csv", "jsonl"} {
		body, hdr := rig.Get(t, base+"/batch/"+batch+"?download="+f)
		cli := r.CLI("results", "--batch", batch, "--format", f)
		if f == "csv" {
			cli = "\ufeff" + cli
		}
		if body != cli || !strings.HasPrefix(hdr.Get("Content-Disposition"), "attachment") {
			t.Errorf("download %s differs from spoolgate results (or is not an attachment)", f)
		}
	}

	// The XSS and traversal suite.
	secret := filepath.Join(r.Dir, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET-4711"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := r.L.Lane(taskfile.KindWeb, taskfile.DirLogs)
	if err := os.Symlink(secret, filepath.Join(logs, "w-ok1.7.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(logs, "w-ok1.8.html")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(logs, "w-ok2.log")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(logs, "w-ok2.log"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(logs, "w-ok2.1.png"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(r.L.Lane(taskfile.KindAPI, taskfile.DirLogs), "xss.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("<script>alert('log')</script><img src=x onerror=alert('log')>\n")
	_ = f.Close()
	if err := os.Symlink(secret, filepath.Join(r.L.Lane(taskfile.KindAPI, taskfile.DirDone), "linked.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"/task/api/..%2F..%2Fsecret.txt", "/task/api/%2e%2e", "/task/api/..", "/task/../../secret.txt",
		"/task/api/linked", "/task/web/w-ok1/shot/7", "/task/web/w-ok1/page/8", "/task/web/w-ok2/shot/1",
		"/task/web/w-ok1/shot/..%2F..%2F..%2Fsecret.txt", "/task/api/%3Cscript%3E", "/batch/..%2F..%2Fsecret.txt", "/task/other/md"} {
		body, _, code := rig.GetCode(t, base+u)
		if code == http.StatusOK || strings.Contains(body, "TOP-SECRET") {
			t.Errorf("%s: %d, want a 404 and nothing of the file", u, code)
		}
	}
	done := make(chan struct{})
	go func() { // a fifo named like a log must not hang the page
		defer close(done)
		body, _, code := rig.GetCode(t, base+"/task/web/w-ok2")
		if code != http.StatusOK || strings.Contains(body, "TOP-SECRET") {
			t.Errorf("task page with a fifo log: %d", code)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the task page hangs on a fifo log")
	}
	hostile := []string{"/", "/?since=24h", "/task/api/xss", "/batch/" + url.PathEscape(hostileBatch), "/task/web/w-ok1", "/task/web/w-ok2"}
	for _, u := range hostile {
		load(base + u)
		var probe struct {
			Scripts, Injected, JSLinks, Handlers int
			Text                                 string
		}
		eval(`({scripts: Array.from(document.scripts).filter(s => s.getAttribute('src') !== '/console.js').length,
		  injected: document.querySelectorAll('iframe, object, embed, img:not(figure.shot img)').length,
		  jsLinks: Array.from(document.querySelectorAll('a[href]')).filter(a => !/^(https?:|mailto:|\/|\?)/.test(a.getAttribute('href'))).length,
		  handlers: Array.from(document.querySelectorAll('*')).filter(e => Array.from(e.attributes).some(a => a.name.startsWith('on'))).length,
		  text: document.body.innerText})`, &probe)
		// Scripts: any but the console's own /console.js (live updates).
		if probe.Scripts != 0 || probe.Injected != 0 || probe.JSLinks != 0 || probe.Handlers != 0 || strings.Contains(probe.Text, "TOP-SECRET") {
			t.Errorf("%s: DOM probe %+v", u, probe)
		}
		if u == "/task/api/xss" && (!strings.Contains(probe.Text, "<script>alert('log')</script>") || !strings.Contains(probe.Text, "click")) {
			t.Errorf("%s: the log and the result should show as text:\n%s", u, probe.Text)
		}
	}
	if n := dialogs.Load(); n != 0 {
		t.Errorf("%d script dialogs opened: something executed", n)
	}
	cancelT()
	cancel()
	cancelA()
	d.Stop()
}
