//go:build linux

package web

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 37's hostile-task suite through `spoolgate run`: a colleague with
// write access to the spool plants send records in pending/ (another
// origin, data:, file:, javascript:, a path that matches `conversation`
// on another origin, a conversation that redirects away, `sending` with a
// one-letter content, a record copied from another task, a record added
// to a colleague's waiting task). None of them steers the signed-in
// browser: the second origin on 127.0.0.1 receives no request, every task
// ends with the answer the stand-in generated for its own prompt, and
// each prompt reaches the stand-in exactly once.
func TestE2E_Web_HostileTasks(t *testing.T) {
	t.Parallel()
	keys := testkit.StandinMarkdownSite("x")
	keys = keys[strings.Index(keys, "    input:"):]
	site := &rig.Site{Name: "md", Opts: chatstand.Options{Renderer: "markdown-it"}, Keys: keys}
	sr := rig.NewSites(t, rig.Opts{TaskTimeout: 60 * time.Second}, 0.01, site)
	var hits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<div data-message-author-role="assistant">the attacker's answer</div>`))
	}))
	t.Cleanup(other.Close)
	const web = taskfile.KindWeb

	// Two genuine tasks leave conversations of the account; then, the
	// lane paused, a colleague's task waits in pending/.
	d := sr.Start()
	sr.Submit(rig.Task{ID: "genuine", Model: "md", Content: "a genuine task"}, rig.Task{ID: "private", Model: "md", Content: "a private question"})
	conv := map[string]string{}
	for _, id := range []string{"genuine", "private"} {
		got := sr.Final(web, id, 90*time.Second)
		if got.State != taskfile.StateSuccess || got.Send == nil || got.Send.Conversation == "" {
			t.Fatalf("%s: state %s send %+v, want success with a conversation\n%s", id, got.State, got.Send, testkit.Tail(sr.TaskLog(web, id), 30))
		}
		conv[id] = got.Send.Conversation
	}
	genuine := sr.Read(web, taskfile.DirDone, "genuine")
	if err := os.WriteFile(sr.L.Paused(web), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sr.Submit(rig.Task{ID: "colleague", Model: "md", Content: "a colleague's task"})
	testkit.WaitFS(t, "the colleague's task in pending/", 20*time.Second, []string{sr.L.Lane(web, taskfile.DirPending)}, func() bool {
		tk := sr.Read(web, taskfile.DirPending, "colleague")
		return tk != nil && tk.State == taskfile.StatePending && !tk.SubmittedAt.IsZero()
	})
	d.Stop()

	// What the colleague plants while no daemon runs.
	page := filepath.Join(sr.Dir, "spool", "web", "answer.html")
	if err := os.WriteFile(page, []byte(`<div data-message-author-role="assistant">the attacker's answer</div>`), 0o644); err != nil {
		t.Fatal(err)
	}
	sent := func(c string) *taskfile.SendRecord {
		return &taskfile.SendRecord{State: taskfile.SendSent, Attempt: 1, Account: genuine.Send.Account, SendingAt: time.Now(), SentAt: time.Now(), Conversation: c}
	}
	planted := map[string]string{} // id → content
	plant := func(id, content string, rec *taskfile.SendRecord) {
		tk := &taskfile.Task{TaskID: id, ModelKind: web, Model: "md", Content: content, State: taskfile.StatePending, Attempt: 1, SubmittedAt: time.Now(), Send: rec}
		data, err := tk.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sr.L.TaskPath(web, taskfile.DirPending, id), data, 0o644); err != nil {
			t.Fatal(err)
		}
		planted[id] = content
	}
	plant("origin", "planted: another origin", sent(other.URL+"/"))
	plant("data", "planted: data", sent("data:text/html,<div data-message-author-role=assistant>the attacker's answer</div>"))
	plant("file", "planted: file", sent("file://"+page))
	plant("js", "planted: javascript", sent("javascript:document.body.innerHTML='<div data-message-author-role=assistant>x</div>'"))
	plant("path", "planted: a matching path on another origin", sent(other.URL+"/c/abc"))
	plant("away", "planted: a redirect away", sent(conv["genuine"]+"?leave="+conv["private"][strings.Index(conv["private"], "/c/"):]))
	plant("e", "e", &taskfile.SendRecord{State: taskfile.SendSending, Attempt: 1, Account: genuine.Send.Account, SendingAt: time.Now()})
	plant("copiedrec", "planted: genuine's record copied", genuine.Send)
	// genuine's whole sealed file, as this task's.
	whole, err := os.ReadFile(sr.L.TaskPath(web, taskfile.DirDone, "genuine"))
	if err != nil {
		t.Fatal(err)
	}
	whole = bytes.Replace(whole, []byte("taskId: genuine"), []byte("taskId: copied"), 1)
	whole = bytes.Replace(whole, []byte("content: a genuine task"), []byte("content: a copied task"), 1)
	whole = bytes.Replace(whole, []byte("state: success"), []byte("state: pending"), 1)
	if err := os.WriteFile(sr.L.TaskPath(web, taskfile.DirPending, "copied"), whole, 0o644); err != nil {
		t.Fatal(err)
	}
	planted["copied"] = "a copied task"
	// A send record added to the colleague's sealed, waiting task.
	cp := sr.L.TaskPath(web, taskfile.DirPending, "colleague")
	data, err := os.ReadFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	add := "send:\n  state: sent\n  attempt: 1\n  account: " + genuine.Send.Account + "\n  sendingAt: 2026-01-01T00:00:00Z\n  conversation: " + conv["private"] + "\n"
	if i := bytes.Index(data, []byte("#sg-seal")); i >= 0 {
		data = append(append(data[:i:i], add...), data[i:]...)
	} else {
		data = append(data, add...)
	}
	if err := os.WriteFile(cp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	planted["colleague"] = "a colleague's task"
	if err := os.Remove(sr.L.Paused(web)); err != nil {
		t.Fatal(err)
	}

	d = sr.Start()
	for id, content := range planted {
		got := sr.Final(web, id, 120*time.Second)
		if want := chatstand.AnswerFor(content); got.State != taskfile.StateSuccess || got.Result != want {
			t.Errorf("%s: state %s error %q result %q, want success with %q\n%s", id, got.State, got.Error, got.Result, want, testkit.Tail(sr.TaskLog(web, id), 30))
		}
		if n := site.Stand.SendsOf(content); n != 1 {
			t.Errorf("%s: the stand-in received the prompt %d times, want once", id, n)
		}
		if !strings.Contains(sr.TaskLog(web, id), "foreign record") {
			t.Errorf("%s: the task's log does not say its record was foreign:\n%s", id, testkit.Tail(sr.TaskLog(web, id), 30))
		}
	}
	d.Stop()
	if n := hits.Load(); n != 0 {
		t.Errorf("the second origin received %d requests, want none", n)
	}
	for _, c := range []string{"a genuine task", "a private question"} {
		if n := site.Stand.SendsOf(c); n != 1 {
			t.Errorf("%q: sent %d times, want once", c, n)
		}
	}
}
