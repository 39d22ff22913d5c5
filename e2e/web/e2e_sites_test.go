//go:build linux

package web

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/spoolgate/spoolgate/doors/cli"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 13's acceptance through `spoolgate run`: real chat-site behaviour
// (rich editors from npm, a web component, a page that never answers,
// Continue generating) against stand-in pages, one stand-in per site.

// e2eStdKeys are the plain stand-in page's selectors.
const e2eStdKeys = `    input: ".input"
    send: "button[type=submit]"
    answer: ".message.assistant"
    busy: "button.stop"
    loggedOut: "a.login"
    newChat: "button.new-chat"
    error: ".error"
`

// The smallest case, a prompt joined to multi-paragraph content,
// and a 20,000-character brief, into a textarea, a plain contenteditable,
// ProseMirror, Lexical and Quill; a web component's chat in an open
// shadow root, three tasks with selectors written as the README says, one
// of them an answer cut off behind "Continue generating". Every text
// arrives at the page's server byte for byte.
func TestE2E_Web_Sites(t *testing.T) {
	t.Parallel()
	prompted := "  - {name: %[1]s, kind: web, site: %[1]s}\n"
	// The editors are driven with examples/site-editor.yaml's selectors.
	keys := e2eExampleKeys(t, "../../examples/site-editor.yaml", "editor")
	var sites []*rig.Site
	for _, in := range []string{"textarea", "contenteditable", "prosemirror", "lexical", "quill"} {
		sites = append(sites, &rig.Site{Name: in, Opts: chatstand.Options{Input: in}, Keys: keys, Model: prompted})
	}
	sites = append(sites, &rig.Site{Name: "component", Opts: chatstand.Options{Shadow: true, Input: "contenteditable"}, Keys: `    input: "chat-app >>> div.input"
    send: "chat-app >>> button[type=submit]"
    answer: ".message.assistant"
    busy: "button.stop"
    loggedOut: "a.login"
    continue: "button.continue"
`})
	r := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second}, 0.001, sites...)
	d := r.Start()

	paragraphs := "para a\n\npara b 第二段：中文。\nline with an emoji 🚀 and  two spaces\n\n\nafter two blank lines"
	long := chatstand.Brief(20000)
	type want struct{ site, sent, result string }
	wants := map[string]want{}
	var tasks []rig.Task
	add := func(id, site, prompt, content, sent string) {
		tasks = append(tasks, rig.Task{ID: id, Model: site, Prompt: prompt, Content: content})
		wants[id] = want{site, sent, chatstand.AnswerFor(sent)}
	}
	for _, s := range sites[:5] {
		add(s.Name+"-paragraphs", s.Name, "Be brief.", paragraphs, "Be brief.\n\n"+paragraphs)
		add(s.Name+"-20000", s.Name, "", long, long)
	}
	for i := range 3 {
		c := fmt.Sprintf("component task %d: 第%d段 🧩\n\nsecond paragraph", i, i)
		if i == 2 {
			c = "[[cut=4]] an answer that stops after four words and goes on"
		}
		add(fmt.Sprintf("component-%d", i), "component", "", c, c)
	}
	r.Submit(tasks...)

	ids := make([]string, 0, len(wants))
	for id := range wants {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	// One session runs the 13 tasks one at a time, in the lane's order,
	// not this one: the first wait covers the whole queue (two 20,000-
	// character tasks a site; CI took over 90 s to reach component-0).
	for _, id := range ids {
		w := wants[id]
		got := r.Final(taskfile.KindWeb, id, 5*time.Minute)
		if got.State != taskfile.StateSuccess || got.Result != w.result {
			t.Errorf("%s: state %s error %q, result %d chars (want %d)\nlog:\n%s", id, got.State, got.Error, len(got.Result), len(w.result), testkit.Tail(r.TaskLog(taskfile.KindWeb, id), 30))
		}
	}
	d.Stop()
	for _, s := range sites {
		seen := map[string]bool{}
		for _, m := range s.Stand.Received() {
			seen[m.Content] = true
		}
		for _, id := range ids {
			if w := wants[id]; w.site == s.Name && !seen[w.sent] {
				t.Errorf("%s: the %s page's server never received the text byte for byte (it got %d messages)", id, s.Name, len(s.Stand.Received()))
			}
		}
		if s.Stand.MaxConcurrent() > 1 {
			t.Errorf("%s: %d generations at once", s.Name, s.Stand.MaxConcurrent())
		}
	}
	log := r.TaskLog(taskfile.KindWeb, "prosemirror-20000")
	for _, step := range []string{"page loaded", "logged-in check", "new chat", `msg="driver: text typed"`, "chars=20000", "method=lines verified=true", "sent", "first token", "answer finished"} {
		if !strings.Contains(log, step) {
			t.Errorf("the task log lacks the step %q:\n%s", step, log)
		}
	}
	if !strings.Contains(r.TaskLog(taskfile.KindWeb, "component-2"), "continue clicked") {
		t.Errorf("the cut-off answer's log does not record the continue click")
	}
	for _, id := range []string{"textarea-20000", "contenteditable-20000", "prosemirror-20000", "lexical-20000", "quill-20000"} {
		for _, line := range strings.Split(r.TaskLog(taskfile.KindWeb, id), "\n") {
			if strings.Contains(line, "text typed") {
				t.Logf("%s: %s", id, line[strings.Index(line, "msg="):])
			}
		}
	}
}

// e2eLogTime is the time= of the first line of a task log containing s.
func e2eLogTime(t *testing.T, log, s string) time.Time {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, s) {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "time="); ok {
				if at, err := time.Parse(time.RFC3339Nano, v); err == nil {
					return at
				}
			}
		}
	}
	t.Fatalf("no line with %s and a time= in the log:\n%s", s, log)
	return time.Time{}
}

// e2eExampleKeys renders the selector keys of an example config's site
// (everything but url) as a site block's lines.
func e2eExampleKeys(t *testing.T, path, site string) string {
	t.Helper()
	cfg, err := config.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := cfg.Sites[site]
	if !ok {
		t.Fatalf("%s has no site %s", path, site)
	}
	sc.URL = ""
	out, err := yaml.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(line, "url:") {
			b.WriteString("    " + line + "\n")
		}
	}
	return b.String()
}

// A page that takes the message and never answers: the attempt fails
// within startTimeout + 5 s (not at web.taskTimeout) as transient, and the
// task file's error names the screenshot and HTML saved for it.
func TestE2E_Web_NoStart(t *testing.T) {
	r := rig.NewSites(t, rig.Opts{Retries0: true, TaskTimeout: 60 * time.Second}, 0.01,
		&rig.Site{Name: "silent", Keys: e2eStdKeys + "    startTimeout: 2s\n"})
	r.Start()
	r.Submit(rig.Task{ID: "silent-1", Model: "silent", Content: "[[nostart]] hello?"})
	got := r.Final(taskfile.KindWeb, "silent-1", 30*time.Second)
	if got.State != taskfile.StateFailed || got.ErrorClass != taskfile.ClassTransient || !strings.Contains(got.Error, "no answer started within 2s") {
		t.Fatalf("state %s class %s error %q; want failed transient: no answer started", got.State, got.ErrorClass, got.Error)
	}
	// From send to the end of the attempt (screenshot, page and close
	// included); the launch before it is the machine's, not the page's.
	sent := e2eLogTime(t, r.TaskLog(taskfile.KindWeb, "silent-1"), `msg="driver: sent"`)
	if took := got.FinishedAt.Sub(sent); took > 7*time.Second || got.FinishedAt.Sub(got.StartedAt) > 30*time.Second {
		t.Errorf("the attempt ended %s after send (%s after its start), want within startTimeout + 5 s", took, got.FinishedAt.Sub(got.StartedAt))
	}
	for _, f := range []string{"web/logs/silent-1.1.png", "web/logs/silent-1.1.html"} {
		if !strings.Contains(got.Error, f) {
			t.Errorf("the task file's error does not name %s: %q", f, got.Error)
		}
		if fi, err := os.Stat(filepath.Join(r.L.Root, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if log := r.TaskLog(taskfile.KindWeb, "silent-1"); !strings.Contains(log, "silent-1.1.png") || !strings.Contains(log, "pageText=") {
		t.Errorf("the task log does not name the screenshot or show the page's text:\n%s", log)
	}
}

// `spoolgate check`: on a good site every key is listed, the ones a page
// at rest shows are found, and it exits 0 (with --send, after an answer);
// on a site whose send button was renamed it exits 1 naming the key.
func TestE2E_Check(t *testing.T) {
	t.Parallel()
	keys := e2eStdKeys + "    promptInput: \"textarea.system\"\n    limited: \".limit\"\n    continue: \"button.continue\"\n" +
		"    upload: \"button.attach\"\n    attached: \".attachment-chip\"\n"
	r := rig.NewSites(t, rig.Opts{}, 0.01,
		&rig.Site{Name: "good", Keys: keys},
		&rig.Site{Name: "renamed", Keys: strings.Replace(keys, `send: "button[type=submit]"`, `send: "button.send-message"`, 1)})

	code, out, errOut := r.Run("check", "good", "--send", "hello from check")
	if os.Getenv("E2E_DUMP") != "" {
		t.Logf("check good:\n%s%s", out, errOut)
	}
	if code != 0 {
		t.Fatalf("check good: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"input", "send", "answer", "busy", "loggedOut", "newChat", "promptInput", "error", "limited", "continue", "upload", "attached"} {
		if !regexp.MustCompile(`(?m)^  ` + want + ` `).MatchString(out) {
			t.Errorf("check good does not list %s:\n%s", want, out)
		}
	}
	for _, want := range []string{`(?m)^  input +\.input +found$`, `(?m)^  send .* found$`, `(?m)^  newChat .* found$`,
		`(?m)^  busy .* not found \(searched the page; it has no open shadow roots\); shows only while`,
		`(?m)^  upload +button\.attach +found$`, `(?m)^  attached .* not found \(.*\); shows only once a file is attached$`,
		`page: signed in, not limited, ready`, `answer: "Answer: hello from check"`, `msg="driver: first token"`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("check good: stdout lacks %s:\n%s", want, out)
		}
	}
	if r.Site["good"].Stand.Generations() != 1 {
		t.Errorf("--send started %d generations, want 1", r.Site["good"].Stand.Generations())
	}

	code, out, errOut = r.Run("check", "renamed")
	if code != 1 || !strings.Contains(out, "NOT READY") ||
		!strings.Contains(errOut, `send "button.send-message": not found (searched the page; it has no open shadow roots)`) {
		t.Fatalf("check renamed: exit %d, want 1 naming the send key\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	testkit.NoProcs(t, r.Profile)
}

// A usage limit holds the account, not the lane (time-scaled: the daemon
// runs with SPOOLGATE_HOLD_SCALE=0.08, so "in 2 minutes" holds 9.6 s, long
// enough that a loaded machine's status command still sees it; at 3.6 s
// one did not):
// the task goes back to pending with no attempt spent, status --json shows
// the hold with the parsed until-time, the other account's task runs
// meanwhile, a page still limited when the hold ends holds it again, and
// once the limit is gone the task succeeds. The same with a Chinese
// message.
func TestE2E_Web_UsageLimit(t *testing.T) {
	t.Parallel()
	const scale = 0.08
	limited := &rig.Site{Name: "limited", Keys: e2eStdKeys + "    limited: \".limit\"\n",
		Model: "  - {name: %[1]s, kind: web, site: %[1]s, account: acctA, needEmptyPrompt: true}\n"}
	free := &rig.Site{Name: "free", Keys: e2eStdKeys,
		Model: "  - {name: %[1]s, kind: web, site: %[1]s, account: acctB, needEmptyPrompt: true}\n"}
	hook := rig.NewHook(t)
	r := rig.NewSites(t, rig.Opts{Tail: "notify:\n  webhook: " + strconv.Quote(hook.Url) + "\n  retryBackoff: 50ms\n"}, 0.01, limited, free)
	r.Env = append(r.Env, fmt.Sprintf("%s=%g", cli.HoldScaleEnv, scale))
	r.Start()
	store := r.Store()
	hold := func(after time.Time) taskfile.Hold {
		t.Helper()
		var h taskfile.Hold
		testkit.WaitFS(t, "a hold of acctA written after "+after.Format(time.RFC3339Nano), 30*time.Second, []string{r.L.Accounts()}, func() bool {
			var ok bool
			h, ok = store.AccountHold("acctA")
			return ok && h.Since.After(after)
		})
		return h
	}
	pendingUnspent := func(id string) {
		t.Helper()
		// The hold is written just before the task's file moves back.
		testkit.WaitFS(t, id+" back in pending", 10*time.Second, []string{r.L.Lane(taskfile.KindWeb, taskfile.DirPending)}, func() bool {
			return r.L.Locate(taskfile.KindWeb, id) == taskfile.DirPending
		})
		tk := r.Read(taskfile.KindWeb, taskfile.DirPending, id)
		if tk == nil || tk.Attempt != 0 || !strings.Contains(tk.Error, "account held by a usage limit") {
			t.Fatalf("%s: %+v; want pending with no attempt spent and the hold in error", id, tk)
		}
	}

	for i, c := range []struct{ msg, restart string }{
		{"You've reached the limit. Try again in 2 minutes.", "and again"},
		{"请求过于频繁，请 2 分钟后再试", ""},
	} {
		limited.Stand.SetLimit(c.msg, time.Hour)
		id := fmt.Sprintf("limited-%d", i)
		before := time.Now().Add(-time.Second)
		r.Submit(rig.Task{ID: id, Model: "limited", Content: "please answer " + id})
		h := hold(before)
		want := time.Duration(float64(2*time.Minute) * scale)
		if h.Reason != c.msg || h.Wait != "2m0s" || h.Task != id || h.Site != "limited" ||
			h.Until.Sub(h.Since) < want || h.Until.Sub(h.Since) > want+time.Duration(float64(14*time.Second)*scale)+50*time.Millisecond {
			t.Fatalf("hold %+v: want the message, wait 2m0s, until since + %s plus a little", h, want)
		}
		pendingUnspent(id)

		var st struct {
			Accounts []struct {
				Account, Reason, Wait string
				Until                 time.Time
			}
		}
		if err := json.Unmarshal([]byte(r.CLI("status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Accounts) != 1 || st.Accounts[0].Account != "acctA" || !st.Accounts[0].Until.Equal(h.Until) || st.Accounts[0].Wait != "2m0s" || st.Accounts[0].Reason != c.msg {
			t.Fatalf("status --json accounts %+v, want acctA held until %s", st.Accounts, h.Until)
		}

		if c.restart != "" {
			// Notifications tell of the hold (issue 15's account.held).
			ev := hook.WaitFor(t, "account.held", "")
			if ev.Account != "acctA" || !strings.Contains(ev.Reason, c.msg) || ev.Until == nil || !ev.Until.Equal(h.Until) {
				t.Errorf("account.held event %+v, want acctA with the message and until %s", ev, h.Until)
			}
			// The other account's task runs while acctA is held.
			r.Submit(rig.Task{ID: "free-1", Model: "free", Content: "meanwhile"})
			if got := r.Final(taskfile.KindWeb, "free-1", 30*time.Second); got.State != taskfile.StateSuccess || !got.StartedAt.Before(h.Until) {
				t.Errorf("free-1: state %s started %s; want success, started while acctA was held (until %s)", got.State, got.StartedAt, h.Until)
			}
			// Still limited when the hold ends: held again, still unspent.
			h = hold(h.Since)
			pendingUnspent(id)
		}
		limited.Stand.SetLimit("", 0)
		got := r.Final(taskfile.KindWeb, id, 60*time.Second)
		if got.State != taskfile.StateSuccess || got.Attempt != 1 || got.Result != chatstand.AnswerFor("please answer "+id) {
			t.Fatalf("%s: state %s attempt %d error %q; want success at attempt 1", id, got.State, got.Attempt, got.Error)
		}
		if !got.StartedAt.After(h.Until) {
			t.Errorf("%s started %s, before its account's hold ended %s", id, got.StartedAt, h.Until)
		}
	}
	// The page showed its limit on load: nothing was typed or sent into
	// it, and each task was generated once.
	if g, n := limited.Stand.Generations(), limited.Stand.Limited(); g != 2 || n != 0 {
		t.Errorf("the limited page saw %d generations and refused %d messages; want 2 and 0", g, n)
	}
}
