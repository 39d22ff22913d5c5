//go:build linux

package chains

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/apistand"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// chainRig is a rig with a chat stand-in (web model chat-web, account
// demo) and an API stand-in (api-plain).
type chainRig struct {
	*rig.Rig
	chat *chatstand.Server
	api  *apistand.Server
}

func newChainRig(t *testing.T, o rig.Opts) *chainRig {
	t.Helper()
	testkit.NeedChromium(t)
	chat, err := chatstand.Start(chatstand.Options{Scale: 0.01, SignedIn: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = chat.Close() })
	api := rig.APIStand(t, apistand.Options{RequireKey: rig.APIKey, Scale: 0.01})
	o.Tail = rig.APIModels(api.URL()) +
		"  - {name: chat-web, kind: web, site: standin, account: demo, needEmptyPrompt: true}\nsites:\n" +
		testkit.StandinSite(chat.URL()) + "accounts:\n  demo: {disabled: false}\n"
	if o.Heartbeat == 0 {
		o.Heartbeat = 500 * time.Millisecond
	}
	if o.StaleAfter == 0 {
		o.StaleAfter = 2 * time.Second
	}
	r := &chainRig{Rig: rig.New(t, o, "E2E_API_KEY="+rig.APIKey), chat: chat, api: api}
	profile := browser.ProfileDir(r.Cfg)
	t.Cleanup(func() { testkit.NoProcs(t, profile) })
	return r
}

// received is the content the chat stand-in received first for a send
// whose content starts with prefix.
func (r *chainRig) received(prefix string) (string, bool) {
	for _, m := range r.chat.Received() {
		if strings.HasPrefix(m.Content, prefix) {
			return m.Content, true
		}
	}
	return "", false
}

// An outline on the web, an article on the web from the outline, a
// summary on the API from the article, dropped together in one batch:
// each runs after its parent, with its parent's result in its content
// exactly, and that filled content is what was sent and recorded.
func TestE2E_Chain_Pipeline(t *testing.T) {
	t.Parallel()
	r := newChainRig(t, rig.Opts{})
	d := r.Start()
	defer d.Stop()
	// Given children first: submit drops each parent before its children
	// (actions.ParentsFirst), as a daemon refuses a child of no task.
	r.Submit(
		rig.Task{ID: "summary", Model: "api-plain", Batch: "pipe", After: []string{"article"}, Content: "Summarize: {{article.result}}"},
		rig.Task{ID: "article", Model: "chat-web", Batch: "pipe", After: []string{"outline"}, Content: "Article from this outline:\n{{outline.result}}\n(end)"},
		rig.Task{ID: "outline", Model: "chat-web", Batch: "pipe", Content: "[[duration=200s]] An outline about tea"},
	)
	// While the outline runs, the article waits in pending/, and says so.
	r.Running(taskfile.KindWeb, "outline", 30*time.Second, func(*taskfile.Task) bool { return true })
	testkit.WaitFS(t, "article taken in", 10*time.Second, []string{r.L.Lane(taskfile.KindWeb, taskfile.DirPending)}, func() bool {
		return r.L.Locate(taskfile.KindWeb, "article") != ""
	})
	if where := r.L.Locate(taskfile.KindWeb, "outline"); where != taskfile.DirRunning {
		t.Fatalf("outline is in %q, want running (its [[duration]] is 2 s)", where)
	}
	if where := r.L.Locate(taskfile.KindWeb, "article"); where != taskfile.DirPending {
		t.Fatalf("article is in %q while its parent runs, want pending", where)
	}
	if out := r.CLI("status"); !strings.Contains(out, "article waits for outline") {
		t.Errorf("status does not say what article waits for:\n%s", out)
	}
	outline := r.Final(taskfile.KindWeb, "outline", 60*time.Second)
	article := r.Final(taskfile.KindWeb, "article", 60*time.Second)
	summary := r.Final(taskfile.KindAPI, "summary", 60*time.Second)
	for _, tk := range []*taskfile.Task{outline, article, summary} {
		if tk.State != taskfile.StateSuccess {
			t.Fatalf("%s: %s (%s: %s)", tk.TaskID, tk.State, tk.ErrorClass, tk.Error)
		}
	}
	wantArticle := "Article from this outline:\n" + outline.Result + "\n(end)"
	if article.Content != wantArticle || article.Template != "Article from this outline:\n{{outline.result}}\n(end)" {
		t.Errorf("article recorded content %q (template %q), want %q", article.Content, article.Template, wantArticle)
	}
	if got, ok := r.received("Article from"); !ok || got != wantArticle {
		t.Errorf("the chat stand-in received %q for the article, want %q", got, wantArticle)
	}
	if article.StartedAt.Before(outline.FinishedAt) || summary.StartedAt.Before(article.FinishedAt) {
		t.Errorf("a child started before its parent ended: outline ended %s, article %s–%s, summary started %s",
			outline.FinishedAt, article.StartedAt, article.FinishedAt, summary.StartedAt)
	}
	wantSummary := "Summarize: " + article.Result
	var sent []string
	for _, q := range r.api.Requests() {
		sent = append(sent, q.User)
	}
	if len(sent) != 1 || sent[0] != wantSummary || summary.Content != wantSummary {
		t.Errorf("the API stand-in received %q and the summary recorded %q, want once %q", sent, summary.Content, wantSummary)
	}
}

// A cycle and an unknown parent are refused, each with a one-line reason,
// and nothing of them runs: a cycle submitted together by submit itself
// (whichever it dropped first, intake would find the other missing), a
// cycle dropped by hand by intake, and an unknown parent by intake.
func TestE2E_Chain_Refused(t *testing.T) {
	t.Parallel()
	r := newChainRig(t, rig.Opts{})
	write := func(dir string, tks ...taskfile.Task) []string {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		var files []string
		for _, tk := range tks {
			data, err := tk.Encode()
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, filepath.Join(dir, tk.TaskID+".yaml"))
			if err := os.WriteFile(files[len(files)-1], data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return files
	}
	// By hand, before the daemon starts: its first scan finds both, and
	// intake names the cycle for the first it judges.
	write(r.L.Lane(taskfile.KindAPI, taskfile.DirIncoming),
		taskfile.Task{TaskID: "ping", Model: "api-plain", After: []string{"pong"}, Content: "x"},
		taskfile.Task{TaskID: "pong", Model: "api-plain", After: []string{"ping"}, Content: "y"})
	d := r.Start()
	defer d.Stop()
	r.Submit(
		rig.Task{ID: "orphan", Model: "api-plain", After: []string{"nobody"}, Content: "{{nobody.result}}"},
		rig.Task{ID: "self", Model: "api-plain", After: []string{"self"}, Content: "x"},
	)
	// Submitted together: submit itself refuses the cycle, dropping
	// nothing (whichever it dropped first, intake would find the other
	// missing and could not name the cycle).
	files := write(filepath.Join(r.Dir, "cycle"),
		taskfile.Task{TaskID: "tick", Model: "api-plain", After: []string{"tock"}, Content: "x"},
		taskfile.Task{TaskID: "tock", Model: "api-plain", After: []string{"tick"}, Content: "y"})
	if code, _, errOut := r.Run(append([]string{"submit"}, files...)...); code == 0 || !strings.Contains(errOut, "after: a cycle: tick waits for tock waits for tick") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("submit of a cycle: exit %d, stderr %q; want one line naming the cycle", code, errOut)
	}
	for _, id := range []string{"tick", "tock"} {
		if _, where := r.L.LocateAny(id); where != "" {
			t.Errorf("submit dropped %s of a refused cycle (in %s)", id, where)
		}
	}
	reason := func(id string) string {
		p := filepath.Join(r.L.Lane(taskfile.KindAPI, taskfile.DirFailed), taskfile.ReasonFileName(id))
		var b []byte
		testkit.WaitFS(t, id+" refused", 20*time.Second, []string{filepath.Dir(p)}, func() bool {
			var err error
			b, err = os.ReadFile(p)
			return err == nil && len(b) > 0
		})
		return string(b)
	}
	for id, want := range map[string][]string{
		"orphan": {`after: no task "nobody" in the spool`},
		"self":   {`after: "self" is this task itself: a cycle`},
		// Of the two, whichever intake took first names the cycle; the
		// other names the cycle too, or the first as no task (a refused
		// drop is not a task).
		"ping": {"after: a cycle: ping waits for pong waits for ping", `after: no task "pong"`},
		"pong": {"after: a cycle: pong waits for ping waits for pong", `after: no task "ping"`},
	} {
		got := reason(id)
		if strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") {
			t.Errorf("%s: reason is not one line: %q", id, got)
		}
		ok := false
		for _, w := range want {
			ok = ok || strings.HasPrefix(got, w)
		}
		if !ok {
			t.Errorf("%s refused with %q, want one of %q", id, got, want)
		}
	}
	if a, b := reason("ping"), reason("pong"); !strings.Contains(a+b, "a cycle") {
		t.Errorf("neither of ping and pong was refused as a cycle: %q, %q", a, b)
	}
	if n := len(r.api.Requests()); n != 0 {
		t.Errorf("the API stand-in received %d requests from refused tasks", n)
	}
}

// A parent that fails fails its child and its follow-up, naming it,
// before either sends anything; retrying the parent lets all run, the
// API follow-up with the draft's turn as messages before its own.
func TestE2E_Chain_FailedParent(t *testing.T) {
	t.Parallel()
	r := newChainRig(t, rig.Opts{Retries0: true})
	d := r.Start()
	defer d.Stop()
	r.Submit(
		rig.Task{ID: "draft", Model: "api-plain", Content: "[[fail=1]] a draft"},
		rig.Task{ID: "polish", Model: "chat-web", After: []string{"draft"}, Content: "Polish: {{draft.result}}"},
		rig.Task{ID: "again", Model: "api-plain", FollowUp: "draft", Content: "Once more, shorter"},
	)
	draft := r.Final(taskfile.KindAPI, "draft", 30*time.Second)
	polish := r.Final(taskfile.KindWeb, "polish", 30*time.Second)
	if draft.State != taskfile.StateFailed {
		t.Fatalf("draft: %s, want failed (the stand-in fails it once)", draft.State)
	}
	want := "parent draft failed: a chained task does not run without its parent's result (retry draft to run both)"
	if polish.State != taskfile.StateFailed || polish.ErrorClass != taskfile.ClassParent || polish.Error != want {
		t.Errorf("polish: %s (%s) %q, want failed (parent) %q", polish.State, polish.ErrorClass, polish.Error, want)
	}
	if n := len(r.chat.Received()); n != 0 {
		t.Errorf("the chat stand-in received %d messages: a child of a failed parent sent", n)
	}
	if again := r.Final(taskfile.KindAPI, "again", 30*time.Second); again.State != taskfile.StateFailed || again.ErrorClass != taskfile.ClassParent || again.Error != want {
		t.Errorf("again: %s (%s) %q, want failed (parent) %q", again.State, again.ErrorClass, again.Error, want)
	}
	r.CLI("retry", "draft")
	testkit.WaitFS(t, "draft and polish done", 60*time.Second,
		[]string{r.L.Lane(taskfile.KindAPI, taskfile.DirDone), r.L.Lane(taskfile.KindWeb, taskfile.DirDone)}, func() bool {
			return r.L.Locate(taskfile.KindAPI, "draft") == taskfile.DirDone && r.L.Locate(taskfile.KindWeb, "polish") == taskfile.DirDone &&
				r.L.Locate(taskfile.KindAPI, "again") == taskfile.DirDone
		})
	draft = r.Read(taskfile.KindAPI, taskfile.DirDone, "draft")
	polish = r.Read(taskfile.KindWeb, taskfile.DirDone, "polish")
	if polish.Content != "Polish: "+draft.Result {
		t.Errorf("polish after the retry: content %q, want it filled from draft's result %q", polish.Content, draft.Result)
	}
	wantTurns := []string{"user: " + draft.Content, "assistant: " + draft.Result, "user: Once more, shorter"}
	var turns []string
	for _, q := range r.api.Requests() {
		if q.User == "Once more, shorter" {
			turns = q.Turns
		}
	}
	if strings.Join(turns, "|") != strings.Join(wantTurns, "|") {
		t.Errorf("the follow-up's request held %q, want %q", turns, wantTurns)
	}
}

// Two daemons (hosts) on one spool run chains of three API tasks: each
// task is sent once, and each child only after its parent's final file
// was there, whichever host ran the parent.
func TestE2E_Chain_TwoDaemons(t *testing.T) {
	t.Parallel()
	r := newChainRig(t, rig.Opts{})
	a := r.StartHost(rig.DaemonOpts{Name: "a", Host: "host-a"})
	b := r.StartHost(rig.DaemonOpts{Name: "b", Host: "host-b"})
	a.WaitReady()
	b.WaitReady()
	const chains = 8
	var tasks []rig.Task
	for i := range chains {
		id := func(step string) string { return fmt.Sprintf("c%d-%s", i, step) }
		tasks = append(tasks,
			rig.Task{ID: id("c"), Model: "api-plain", After: []string{id("b")}, Content: "third from {{" + id("b") + ".result}}"},
			rig.Task{ID: id("b"), Model: "api-plain", After: []string{id("a")}, Content: "second from {{" + id("a") + ".result}}"},
			rig.Task{ID: id("a"), Model: "api-plain", Content: fmt.Sprintf("[[duration=%ds]] first of chain %d", 10+5*i, i)})
	}
	r.Submit(tasks...)
	final := map[string]*taskfile.Task{}
	for _, tk := range tasks {
		final[tk.ID] = r.Final(taskfile.KindAPI, tk.ID, 60*time.Second)
	}
	a.Stop()
	b.Stop()
	sent := map[string]int{}
	for _, q := range r.api.Requests() {
		sent[q.User]++
	}
	crossed := 0
	for _, tk := range tasks {
		got := final[tk.ID]
		if got.State != taskfile.StateSuccess || got.Attempt != 1 {
			why, _ := os.ReadFile(filepath.Join(r.L.Lane(taskfile.KindAPI, taskfile.DirFailed), taskfile.ReasonFileName(tk.ID)))
			t.Errorf("%s: %s at attempt %d (%s%s), want success at attempt 1", tk.ID, got.State, got.Attempt, got.Error, why)
			continue
		}
		if n := sent[got.Content]; n != 1 {
			t.Errorf("%s: its content %q was sent %d times, want once", tk.ID, got.Content, n)
		}
		if len(tk.After) == 0 {
			continue
		}
		p := final[tk.After[0]]
		if got.StartedAt.Before(p.FinishedAt) || got.Content != strings.SplitN(tk.Content, "{{", 2)[0]+p.Result {
			t.Errorf("%s started %s with %q; its parent %s ended %s with %q", tk.ID, got.StartedAt, got.Content, p.TaskID, p.FinishedAt, p.Result)
		}
		if ha, _, _ := strings.Cut(got.Owner, ":"); !strings.HasPrefix(p.Owner, ha+":") {
			crossed++
		}
	}
	t.Logf("chains: %d of %d children ran on another host than their parent", crossed, 2*chains)
}
