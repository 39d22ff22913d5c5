//go:build linux

package accounts

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/doors/cli"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// e2eAccountsRig is a rig with the chat stand-in and two accounts of its
// site, a1 and a2, each signed in on its own profile; tail adds to the
// config after the site (models first: they are given whole); o gives
// the rig's other options (the status page's address).
func e2eAccountsRig(t *testing.T, o rig.Opts, models, accounts, extra string, env ...string) (*rig.Rig, *chatstand.Server) {
	t.Helper()
	testkit.NeedChromium(t)
	stand, err := chatstand.Start(chatstand.Options{Scale: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stand.Close() })
	tail := "models:\n" + models + "sites:\n" + testkit.StandinSite(stand.URL()) + "accounts:\n" + accounts + extra
	o.Tail, o.Heartbeat, o.StaleAfter = tail, 500*time.Millisecond, 2*time.Second
	r := rig.New(t, o, env...)
	for _, s := range r.Cfg.WebSessions() {
		t.Cleanup(func() { testkit.NoProcs(t, s.Profile) })
		rig.LoginAs(t, r.Cfg, s.Profile, stand.URL(), s.Account)
	}
	return r, stand
}

// Issue 42's pacing through `spoolgate run`: six tasks on account a1,
// paced at a 2 s gap with 0.5 s of jitter and 4 sends a minute (the
// minute scaled by 0.25: 15 s; the gap is real). The account's pace record
// gets four sends of the second before the tasks come, once the daemon is
// up (as another host of the spool would have sent them): the first task
// waits for the cap at once, for about 14 s, long enough for two status
// commands on a loaded machine (CI: a record seeded before the daemon's
// start left too short a wait once the start and submit had run).
// The send times (those four, then the stand-in's) keep both rules; the
// tasks that wait stay pending with the reason in status (text and JSON);
// none fails; a2's tasks run while a1 waits.
func TestE2E_Web_Pace(t *testing.T) {
	t.Parallel()
	const scale = 0.25
	r, stand := e2eAccountsRig(t, rig.Opts{},
		"  - {name: chat-a1, kind: web, site: standin, account: a1, needEmptyPrompt: true}\n  - {name: chat-a2, kind: web, site: standin, account: a2, needEmptyPrompt: true}\n",
		"  a1: {site: standin, pace: {gap: 2s, jitter: 500ms, perMinute: 4}}\n  a2: {site: standin}\n", "",
		cli.PaceScaleEnv+"="+strconv.FormatFloat(scale, 'g', -1, 64))
	gap, jitter, window := 2*time.Second, 500*time.Millisecond, time.Duration(60*scale*float64(time.Second))
	st := r.Store()
	pace := r.Cfg.PaceOf("a1", "standin").Scaled(scale)
	d := r.Start()
	d.WaitReady()
	now := time.Now()
	seeded := []time.Time{now.Add(-1200 * time.Millisecond), now.Add(-900 * time.Millisecond), now.Add(-600 * time.Millisecond), now.Add(-300 * time.Millisecond)}
	for _, at := range seeded {
		if err := st.RecordPaceSend("a1", at, pace); err != nil {
			t.Fatal(err)
		}
	}
	var tasks []rig.Task
	for i := range 6 {
		tasks = append(tasks, rig.Task{ID: fmt.Sprintf("p%d", i), Model: "chat-a1", Content: fmt.Sprintf("paced %d", i)})
	}
	for i := range 2 {
		tasks = append(tasks, rig.Task{ID: fmt.Sprintf("q%d", i), Model: "chat-a2", Content: fmt.Sprintf("free %d", i)})
	}
	start := time.Now()
	r.Submit(tasks...)

	// A task that waits for the pace stays pending, and status shows the
	// reason and the time while it waits (text and JSON): checked at a
	// wait that lasts longer than the two status commands take (the cap's
	// does; a gap's may pass before them).
	var lastUntil time.Time
	for shown := false; !shown; {
		var rec taskfile.PaceRecord
		testkit.WaitFS(t, "a1 paced", 90*time.Second, []string{r.L.Accounts()}, func() bool {
			var ok bool
			rec, ok = st.PaceRecord("a1")
			return ok && rec.PacedBy != "" && rec.PacedUntil.After(lastUntil) && rec.PacedUntil.After(time.Now())
		})
		lastUntil = rec.PacedUntil
		text := r.CLI("status")
		js := r.CLI("status", "--json")
		if !time.Now().Before(rec.PacedUntil) {
			continue // the wait ended while status ran: try the next one
		}
		shown = true
		if !strings.Contains(text, "account a1 paced until") || !strings.Contains(text, "("+rec.PacedBy+")") || !strings.Contains(text, "session a1") {
			t.Errorf("status does not show the pace (%s until %s):\n%s", rec.PacedBy, rec.PacedUntil.Format(time.RFC3339Nano), text)
		}
		if !strings.Contains(js, `"kind": "paced"`) || !strings.Contains(js, `"pacedBy": "`+rec.PacedBy+`"`) || !strings.Contains(js, `"pacedUntil"`) {
			t.Errorf("status --json does not show the pace:\n%s", js)
		}
		for _, tk := range tasks[:6] {
			if dir := r.L.Locate(taskfile.KindWeb, tk.ID); dir == taskfile.DirFailed {
				t.Errorf("%s failed while paced", tk.ID)
			}
		}
	}
	for _, tk := range tasks {
		got := r.Final(taskfile.KindWeb, tk.ID, 2*time.Minute)
		if got.State != taskfile.StateSuccess || got.Attempt != 1 || got.Result != chatstand.AnswerFor(tk.Content) {
			t.Errorf("%s: %s attempt %d %q (error %q)", tk.ID, got.State, got.Attempt, got.Result, got.Error)
		}
	}
	took := time.Since(start)
	d.Stop()

	sends := append([]time.Time(nil), seeded...)
	var a2First time.Time
	for _, m := range stand.Received() {
		if m.User == "a1" && m.Refused == "" {
			sends = append(sends, m.At)
		}
		if m.User == "a2" && a2First.IsZero() {
			a2First = m.At
		}
	}
	if len(sends) != 10 {
		t.Fatalf("a1 sent %d messages, want 6 (beside the 4 before the start)", len(sends)-4)
	}
	var gaps []string
	for i := 4; i < len(sends); i++ {
		g := sends[i].Sub(sends[i-1])
		gaps = append(gaps, g.Round(time.Millisecond).String())
		if g < gap {
			t.Errorf("send %d came %s after the one before, under the gap %s", i, g, gap)
		}
	}
	for i := 0; i+4 < len(sends); i++ {
		if span := sends[i+4].Sub(sends[i]); span < window {
			t.Errorf("sends %d to %d (five) within %s, under the window %s: more than 4 in a minute", i, i+4, span, window)
		}
	}
	if a2First.IsZero() || !a2First.Before(sends[4]) {
		t.Errorf("a2's first send at %s, not while a1 waited for its cap (a1's first send %s)", a2First.Format(time.RFC3339Nano), sends[4].Format(time.RFC3339Nano))
	}
	var spans []string
	for i := 0; i+4 < len(sends); i++ {
		spans = append(spans, sends[i+4].Sub(sends[i]).Round(time.Millisecond).String())
	}
	t.Logf("paced a1: 6 sends in %s (batch %s), the first %s after the start; gaps %v (gap %s + jitter up to %s); five-send spans %v (window %s)",
		sends[9].Sub(sends[4]).Round(time.Millisecond), took.Round(time.Millisecond), sends[4].Sub(start).Round(time.Millisecond), gaps, gap, jitter, spans, window)
}

// Issue 42's holds through `spoolgate run`: a1 is signed out after one
// answer ([[signout]]), then shows a challenge frame ([[challenge]]).
// Each time the account is held (signed out, challenge) with a screenshot,
// the task that met it goes back to pending unspent, one notification
// (account.loggedOut, account.challenge) carries the screenshot's link,
// no task fails and the batch finishes on a2. A task pinned to a1 waits
// until a1 is signed in again and released.
func TestE2E_Web_Holds(t *testing.T) {
	t.Parallel()
	hook := rig.NewHook(t)
	r, stand := e2eAccountsRig(t, rig.Opts{},
		"  - {name: chat-web, kind: web, site: standin, needEmptyPrompt: true}\n  - {name: chat-a1, kind: web, site: standin, account: a1, needEmptyPrompt: true}\n",
		"  a1: {site: standin}\n  a2: {site: standin}\n",
		"notify:\n  webhook: "+strconv.Quote(hook.Url)+"\n  retryBackoff: 50ms\n")
	d := r.Start()
	st := r.Store()
	a1Profile := ""
	for _, s := range r.Cfg.WebSessions() {
		if s.Account == "a1" {
			a1Profile = s.Profile
		}
	}
	for _, c := range []struct {
		directive, kind, event, state string
	}{
		{"[[signout]]", taskfile.HoldSignedOut, config.EventAccountLoggedOut, "signed out"},
		{"[[challenge]]", taskfile.HoldChallenge, config.EventAccountChallenge, "challenge"},
	} {
		// One answer on a1 that leaves it signed out (or challenged).
		first := "first-" + c.kind
		r.Submit(rig.Task{ID: first, Model: "chat-a1", Content: c.directive + " " + first})
		if got := r.Final(taskfile.KindWeb, first, time.Minute); got.State != taskfile.StateSuccess {
			t.Fatalf("%s: %s %q", first, got.State, got.Error)
		}
		// A batch for either account: a1 takes one, meets the page and is
		// held; a2 finishes the batch.
		var batch []rig.Task
		for i := range 4 {
			batch = append(batch, rig.Task{ID: fmt.Sprintf("%s-b%d", c.kind, i), Model: "chat-web", Content: fmt.Sprintf("batch %s %d", c.kind, i)})
		}
		r.Submit(batch...)
		var h taskfile.Hold
		testkit.WaitFS(t, "a1 held ("+c.kind+")", time.Minute, []string{r.L.Accounts()}, func() bool {
			var ok bool
			h, ok = st.AccountHold("a1")
			return ok && h.Kind == c.kind
		})
		pinned := "pinned-" + c.kind
		r.Submit(rig.Task{ID: pinned, Model: "chat-a1", Content: "waits for a1 " + c.kind})
		ran := map[string]int{}
		for _, tk := range batch {
			got := r.Final(taskfile.KindWeb, tk.ID, time.Minute)
			if got.State != taskfile.StateSuccess || got.Attempt != 1 {
				t.Errorf("%s: %s attempt %d error %q; want success at attempt 1", tk.ID, got.State, got.Attempt, got.Error)
			}
			ran[got.Account]++
		}
		if ran["a2"] != len(batch) {
			t.Errorf("%s: the batch ran on %v, want all of it on a2", c.kind, ran)
		}
		shot := filepath.Join(r.L.Root, h.Screenshot)
		if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 || !strings.HasSuffix(h.Screenshot, ".png") || !h.Until.IsZero() {
			t.Errorf("hold %+v: want a screenshot (%v) and no until-time", h, err)
		}
		ev := hook.WaitFor(t, c.event, "")
		if ev.Account != "a1" || ev.Screenshot != h.Screenshot || ev.ScreenshotURL != taskfile.ShotHref(h.Screenshot) || ev.ScreenshotURL == "" {
			t.Errorf("%s event %+v: want a1 with the screenshot %s and its link", c.event, ev, h.Screenshot)
		}
		if n := len(hook.Received(c.event, "")); n != 1 {
			t.Errorf("%d %s events, want one per hold", n, c.event)
		}
		out := r.CLI("status")
		if !strings.Contains(out, c.state+" (screenshot "+h.Screenshot+")") {
			t.Errorf("status does not show a1 %s with its screenshot:\n%s", c.state, out)
		}
		if dir := r.L.Locate(taskfile.KindWeb, pinned); dir != taskfile.DirPending {
			t.Errorf("%s in %s, want pending while a1 is held", pinned, dir)
		}
		// Signed in again and released: the pinned task runs on a1.
		rig.LoginAs(t, r.Cfg, a1Profile, stand.URL(), "a1")
		if out := r.CLI("resume", "--account", "a1"); !strings.Contains(out, "hold ended by hand") {
			t.Errorf("resume printed %q", out)
		}
		if got := r.Final(taskfile.KindWeb, pinned, time.Minute); got.State != taskfile.StateSuccess || got.Account != "a1" || got.Attempt != 1 {
			t.Errorf("%s: %s on %s attempt %d error %q", pinned, got.State, got.Account, got.Attempt, got.Error)
		}
	}
	if ents, _ := os.ReadDir(r.L.Lane(taskfile.KindWeb, taskfile.DirFailed)); len(ents) != 0 {
		t.Errorf("%d files in failed/, want none", len(ents))
	}
	d.Stop()
}
