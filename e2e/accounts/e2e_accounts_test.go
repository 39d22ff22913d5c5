//go:build linux

package accounts

import (
	"fmt"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/examples/chatstand"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// Issue 14's acceptance through `spoolgate run` with real headless
// Chromium: 24 web tasks (8 in `make test`, 24 under `make soak`)
// on two accounts of one site, each account signed in on its own profile.
// All succeed; the stand-in sees at most one generation per account and
// two in total, and both accounts run tasks.
func TestE2E_Web_TwoAccounts(t *testing.T) {
	t.Parallel()
	const scale = 0.01
	testkit.NeedChromium(t)
	stand, err := chatstand.Start(chatstand.Options{Scale: scale})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stand.Close() })
	tail := fmt.Sprintf(`models:
  - {name: chat-web, kind: web, site: standin, needEmptyPrompt: true}
sites:
%saccounts:
  a1: {site: standin}
  a2: {site: standin}
`, testkit.StandinSite(stand.URL()))
	r := rig.New(t, rig.Opts{Tail: tail, Heartbeat: 500 * time.Millisecond, StaleAfter: 2 * time.Second})
	sessions := r.Cfg.WebSessions()
	if len(sessions) != 2 {
		t.Fatalf("sessions: %+v", sessions)
	}
	for _, s := range sessions {
		t.Cleanup(func() { testkit.NoProcs(t, s.Profile) })
		rig.LoginAs(t, r.Cfg, s.Profile, stand.URL(), s.Account)
	}
	d := r.Start()
	var tasks []rig.Task
	n := 8
	if testkit.Reliability() {
		n = 24
	}
	for i := range n {
		tasks = append(tasks, rig.Task{ID: fmt.Sprintf("t%02d", i), Model: "chat-web",
			Content: fmt.Sprintf("[[duration=%ds]] task %d", 40+5*(i%5), i)})
	}
	start := time.Now()
	r.Submit(tasks...)
	ran := map[string]int{}
	for _, tk := range tasks {
		got := r.Final(taskfile.KindWeb, tk.ID, 4*time.Minute)
		if got.State != taskfile.StateSuccess || got.Result != chatstand.AnswerFor(tk.Content) {
			t.Errorf("%s: %s %q (error %q)", tk.ID, got.State, got.Result, got.Error)
		}
		ran[got.Account]++
	}
	took := time.Since(start)
	d.Stop()
	per := stand.MaxPerAccount()
	t.Logf("two accounts, %d tasks through Chromium in %s: stand-in max per account %v, max in total %d, collisions %d; tasks per account (task files) %v, generations a1 %d a2 %d",
		n, took.Round(time.Millisecond), per, stand.MaxTotal(), stand.Collisions(), ran, stand.GenerationsBy("a1"), stand.GenerationsBy("a2"))
	if per["a1"] != 1 || per["a2"] != 1 || stand.Collisions() != 0 {
		t.Errorf("an account had two generations at once: %v, collisions %d", per, stand.Collisions())
	}
	if stand.MaxTotal() > 2 {
		t.Errorf("%d generations at once in total, want at most 2", stand.MaxTotal())
	}
	if ran["a1"] == 0 || ran["a2"] == 0 || stand.GenerationsBy("a1") == 0 || stand.GenerationsBy("a2") == 0 {
		t.Errorf("both accounts should run tasks: %v", ran)
	}
}
