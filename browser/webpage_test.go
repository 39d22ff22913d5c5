//go:build linux

package browser

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// The failure modes of real chat sites, each against the stand-in page
// that shows it, through the executor (launch, drive, close).

// A page whose answer never starts fails within startTimeout (not
// taskTimeout) as transient, with the page's text in the log, and leaves
// its screenshot and HTML, named in the error.
func TestExecutor_Execute_NoStart(t *testing.T) {
	e := newEnv(t, envOpts{siteExtra: "    startTimeout: 1s\n"})
	job, log := e.job(t, "chat-web", "", "[[nostart]] anyone there?")
	job.Task.Attempt = 2
	start := time.Now()
	_, err := e.exec.Execute(context.Background(), job)
	took := time.Since(start)
	if attempt.Classify(err) != taskfile.ClassTransient || !strings.Contains(err.Error(), "no answer started within 1s") {
		t.Fatalf("err %v, want transient: no answer started\nlog:\n%s", err, log)
	}
	// Within the 30 s taskTimeout: startTimeout ended it (a loaded
	// machine's launch and close may take seconds, seen 9 s in all).
	if took >= e.cfg.Web.TaskTimeout.D() {
		t.Fatalf("took %s, want less than the taskTimeout %s: startTimeout ends a page whose answer never starts", took, e.cfg.Web.TaskTimeout.D())
	}
	if !strings.Contains(log.String(), `pageText="Signed in as demo`) {
		t.Errorf("the log has no excerpt of the page:\n%s", log)
	}
	L := spool.NewLayout(e.cfg.Spool)
	for _, ext := range []string{".png", ".html"} {
		name := "web/logs/" + job.Task.TaskID + ".2" + ext
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s: %v", name, err)
		}
		fi, serr := os.Stat(filepath.Join(L.Root, name))
		if serr != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, serr)
		}
	}
	html, _ := os.ReadFile(filepath.Join(L.Root, "web/logs", job.Task.TaskID+".2.html"))
	if !strings.Contains(string(html), "anyone there?") {
		t.Errorf("the saved page does not show the message sent:\n%.500s", html)
	}
}

// A usage-limit page ends the attempt as account with the hold the
// message names: "in 2 minutes" and "1 小时后".
func TestExecutor_Execute_Limited(t *testing.T) {
	e := newEnv(t, envOpts{siteExtra: "    limited: \".limit\"\n    limitHold: 45m\n"})
	for _, c := range []struct{ msg, wait string }{
		{"You've reached the limit. Try again in 2 minutes.", "2m0s"},
		{"请求过于频繁，请 1 小时后再试", "1h0m0s"},
		{"You have hit the usage cap.", ""}, // no time: limitHold
	} {
		e.stand.SetLimit(c.msg, time.Minute)
		job, log := e.job(t, "chat-web", "", "hello")
		before := time.Now()
		_, err := e.exec.Execute(context.Background(), job)
		var te *attempt.TaskError
		if !errors.As(err, &te) || te.Class != taskfile.ClassAccount || te.Hold == nil {
			t.Fatalf("%q: err %v, want account with a hold\nlog:\n%s", c.msg, err, log)
		}
		want := 45 * time.Minute
		if c.wait != "" {
			want, _ = time.ParseDuration(c.wait)
		}
		if te.Hold.Reason != c.msg || te.Hold.Wait != c.wait || te.Hold.Site != "standin" ||
			te.Hold.Until.Before(before.Add(want)) || te.Hold.Until.After(time.Now().Add(want+2*time.Second+min(want/10, time.Minute))) {
			t.Errorf("%q: hold %+v, want reason = message, wait %q, until about now+%s", c.msg, *te.Hold, c.wait, want)
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("the error does not carry the message: %v", err)
		}
	}
	if n := e.stand.Generations(); n != 0 {
		t.Fatalf("%d generations started on a limited page", n)
	}
	// A limit that strikes at the message sent, not on load.
	e.stand.SetLimit("", 0)
	job, log := e.job(t, "chat-web", "", "[[limit]] one more")
	_, err := e.exec.Execute(context.Background(), job)
	var te *attempt.TaskError
	if !errors.As(err, &te) || te.Hold == nil || te.Hold.Reason != chatstand.LimitMessage || te.Hold.Wait != "20s" {
		t.Fatalf("err %v, want account with a 20 s hold\nlog:\n%s", err, log)
	}
}

// An answer that stops mid-way and offers "Continue generating": the
// result is the whole answer.
func TestExecutor_Execute_Continue(t *testing.T) {
	e := newEnv(t, envOpts{siteExtra: "    continue: \"button.continue\"\n"})
	content := "[[cut=3]] one two three four five six seven"
	job, log := e.job(t, "chat-web", "", content)
	res, err := e.exec.Execute(context.Background(), job)
	if err != nil {
		t.Fatalf("Execute: %v\nlog:\n%s", err, log)
	}
	if want := chatstand.AnswerFor(content); res.Text != want {
		t.Fatalf("result %q, want the whole answer %q\nlog:\n%s", res.Text, want, log)
	}
	if !strings.Contains(log.String(), `msg="driver: continue clicked"`) {
		t.Errorf("the log does not record the continue click:\n%s", log)
	}
}

// A selector that matches nothing on a loaded page fails at once as
// environment, naming the key, the selector and where it was looked for.
func TestExecutor_Execute_MissingSelector(t *testing.T) {
	e := newEnv(t, envOpts{stand: chatstand.Options{Shadow: true}, site: `    url: %q
    input: "textarea.renamed"
    send: "button[type=submit]"
    answer: ".message.assistant"
    loggedOut: "a.login"
`})
	// A page-load time far beyond the input's grace and any launch on a
	// loaded machine (CI saw a launch take 9 s): a failure before it is
	// one that did not wait it out.
	e.exec.Timings.InputGrace, e.exec.Timings.PageLoad = time.Second, 60*time.Second
	job, log := e.job(t, "chat-web", "", "hello")
	start := time.Now()
	_, err := e.exec.Execute(context.Background(), job)
	if attempt.Classify(err) != taskfile.ClassEnvironment {
		t.Fatalf("err %v (class %s), want environment\nlog:\n%s", err, attempt.Classify(err), log)
	}
	for _, want := range []string{`input "textarea.renamed" matches nothing`, "searched the page and its 1 open shadow roots", "spoolgate check standin"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if d := time.Since(start); d >= e.exec.Timings.PageLoad {
		t.Errorf("took %s: a missing input must not wait out the page-load time (%s)", d, e.exec.Timings.PageLoad)
	}
}
