//go:build linux

package accounts

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/spoolgate/spoolgate/doors/console"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 42's sign-in from the page, through `spoolgate run`: a1 is signed
// out after one answer and held; a task pinned to it waits pending. An
// operator logged in to the console opens a1's live view in a real
// headless Chromium, clicks the stand-in's "Sign in" on the streamed
// image and presses Enter in the sign-in form. The view reports signed
// in, the daemon ends the hold, and once the view is closed the held task
// runs on a1 at its first attempt, on the profile signed in from the page.
func TestE2E_Web_LiveSignIn(t *testing.T) {
	t.Parallel()
	chromium := testkit.NeedChromium(t)
	hash, err := console.HashPassword("pw")
	if err != nil {
		t.Fatal(err)
	}
	r, stand := e2eAccountsRig(t, rig.Opts{HTTP: "127.0.0.1:0"},
		"  - {name: chat-a1, kind: web, site: standin, account: a1, needEmptyPrompt: true}\n",
		"  a1: {site: standin}\n",
		fmt.Sprintf("console:\n  users:\n    wang: %q\n", hash))
	d := r.Start()
	base := rig.StatusURL(t, d)
	st := r.Store()

	r.Submit(rig.Task{ID: "first", Model: "chat-a1", Content: "[[signout]] first"})
	if got := r.Final(taskfile.KindWeb, "first", time.Minute); got.State != taskfile.StateSuccess {
		t.Fatalf("first: %s %q", got.State, got.Error)
	}
	r.Submit(rig.Task{ID: "held", Model: "chat-a1", Content: "after the sign-in"})
	testkit.WaitFS(t, "a1 held (signed out)", time.Minute, []string{r.L.Accounts()}, func() bool {
		h, ok := st.AccountHold("a1")
		return ok && h.Kind == taskfile.HoldSignedOut
	})

	actx, cancelA := chromedp.NewExecAllocator(context.Background(), testkit.ChromiumOptions(t, chromium)...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	ctx, cancelT := context.WithTimeout(bctx, 3*time.Minute) // a deadline, not a pace: CI runs under load
	defer cancelT()
	do := func(what string, acts ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, acts...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, testkit.Tail(d.LogText(), 30))
		}
	}
	look := func() testkit.LiveView { return testkit.LookLive(t, ctx) }
	do("log in to the console", chromedp.Navigate(base+"/login"),
		chromedp.SetValue(chromedp.CSS("#user"), "wang"), chromedp.SetValue(chromedp.CSS("#password"), "pw"),
		chromedp.Click(chromedp.CSS("#login")), chromedp.WaitVisible(chromedp.CSS("#logout")))
	do("open a1's live view", chromedp.Navigate(base+"/live/a1"))
	var v testkit.LiveView
	testkit.Wait(t, "the signed-out page on the operator's screen", 90*time.Second, func() bool {
		v = look()
		return v.Seq > 0 && v.W > 0 && v.State == "open"
	})
	if dir := r.L.Locate(taskfile.KindWeb, "held"); dir != taskfile.DirPending {
		t.Errorf("held in %s while the view is open, want pending", dir)
	}

	do("click Sign in on the image", chromedp.MouseClickXY(v.Left+chatstand.SignInX/v.W*v.Width, v.Top+chatstand.SignInY/v.H*v.Height))
	// The operator types once the form shows: the stand-in served it, and
	// a frame came after that.
	var seq int
	testkit.Wait(t, "the sign-in form served", 60*time.Second, func() bool {
		if stand.LoginFormsServed() == 0 {
			return false
		}
		seq = look().Seq
		return true
	})
	testkit.Wait(t, "a new frame (the sign-in form)", 60*time.Second, func() bool { return look().Seq > seq })
	// Enter signs in with the field left empty: as the stand-in's demo
	// user (typing itself is TestLiveView_SignIn's, a code into a field).
	// A key that reaches the page before its script has focused the field
	// is lost (a loaded machine): like an operator, press it again when
	// nothing happened for a while.
	var pressed time.Time
	testkit.Wait(t, "the view to report signed in", 90*time.Second, func() bool {
		if look().State == "signed-in" {
			return true
		}
		if time.Since(pressed) > 5*time.Second {
			do("press Enter in the sign-in form", chromedp.KeyEvent("\r"))
			pressed = time.Now()
		}
		return false
	})
	testkit.WaitFS(t, "a1's hold to end", 30*time.Second, []string{r.L.Accounts()}, func() bool {
		_, held := st.AccountHold("a1")
		return !held
	})
	do("close the view", chromedp.Click(chromedp.CSS("#close")))

	got := r.Final(taskfile.KindWeb, "held", 2*time.Minute)
	if got.State != taskfile.StateSuccess || got.Account != "a1" || got.Attempt != 1 {
		t.Errorf("held: %s on %s attempt %d error %q; want success on a1 at attempt 1", got.State, got.Account, got.Attempt, got.Error)
	}
	if a1, demo := stand.GenerationsBy("a1"), stand.GenerationsBy("demo"); a1 != 1 || demo != 1 {
		t.Errorf("the stand-in answered a1 %d times and demo %d, want 1 each (first as a1; held, once signed in from the page, as demo)", a1, demo)
	}
	if out := r.CLI("status"); strings.Contains(out, "signed out") {
		t.Errorf("status still shows a1 signed out:\n%s", out)
	}
	d.Stop()
}
