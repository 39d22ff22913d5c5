package notify

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestStateWatch_Poll(t *testing.T) {
	h := newHook(t)
	cfg := testConfig(t, fmt.Sprintf("notify: {webhook: %q}\n", h.URL))
	n := New(cfg, nil)
	n.Start(context.Background())
	defer n.Stop()
	var mu sync.Mutex
	standby, active := true, true
	held := map[string]Hold{"ops1": {Reason: "disabled"}}
	w := &StateWatch{Notifier: n, Cfg: cfg,
		Standby: func() (bool, string) { mu.Lock(); defer mu.Unlock(); return standby, "pid 7 on h" },
		Holds: func() (map[string]Hold, bool) {
			mu.Lock()
			defer mu.Unlock()
			c := map[string]Hold{}
			for k, v := range held {
				c[k] = v
			}
			return c, active
		}}
	step := func(f func()) { mu.Lock(); f(); mu.Unlock(); w.poll() }
	w.poll() // starts in standby: told; ops1 held at start: not told
	step(func() { standby = false })
	step(func() { standby = true })                                                                                 // lane.standby
	step(func() { held["ops2"] = Hold{Reason: "usage limit", Until: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)} }) // held ops2
	step(func() { delete(held, "ops1") })                                                                           // released ops1
	step(func() { active = false; held["ops3"] = Hold{Reason: "x"} })                                               // not ours to tell
	step(func() { active = true })                                                                                  // new baseline
	step(func() { delete(held, "ops3") })                                                                           // released ops3
	var got []string
	for i := 0; i < 5; i++ {
		e := h.wait(t, 10*time.Second)
		s := e.Event + " " + e.Account + e.Holder
		if e.Until != nil {
			s += " until " + e.Until.Format("2006")
		}
		got = append(got, s)
	}
	want := []string{config.EventLaneStandby + " pid 7 on h", config.EventLaneStandby + " pid 7 on h", config.EventAccountHeld + " ops2 until 2030",
		config.EventAccountReleased + " ops1", config.EventAccountReleased + " ops3"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events\n got %q\nwant %q", got, want)
	}
	w.Start(context.Background())
	w.Stop()
	w.Stop()
}

// A signed-out or challenge hold is told once, as account.loggedOut or
// account.challenge, with the page's screenshot and its link on the status
// page (absolute when http: names an address; the host stands in for a
// wildcard one); a hold that stays is not told again.
func TestStateWatch_SignInHolds(t *testing.T) {
	h := newHook(t)
	cfg := testConfig(t, fmt.Sprintf("http: 0.0.0.0:8080\nnotify: {webhook: %q}\n", h.URL))
	n := New(cfg, nil)
	n.Start(context.Background())
	defer n.Stop()
	held := map[string]Hold{}
	w := &StateWatch{Notifier: n, Cfg: cfg, Holds: func() (map[string]Hold, bool) {
		c := map[string]Hold{}
		for k, v := range held {
			c[k] = v
		}
		return c, true
	}}
	w.poll()
	held["ops1"] = Hold{Kind: taskfile.HoldSignedOut, Reason: "signed out", Task: "t1", Screenshot: "web/logs/t1.1.png"}
	w.poll()
	w.poll()
	held["ops2"] = Hold{Kind: taskfile.HoldChallenge, Reason: "held by a challenge: Cloudflare challenge", Task: "t2", Screenshot: "web/logs/t2.3.png"}
	w.poll()
	for _, want := range []struct{ event, account, shot, url string }{
		{config.EventAccountLoggedOut, "ops1", "web/logs/t1.1.png", "http://testhost:8080/task/web/t1/shot/1"},
		{config.EventAccountChallenge, "ops2", "web/logs/t2.3.png", "http://testhost:8080/task/web/t2/shot/3"},
	} {
		e := h.wait(t, 10*time.Second)
		if e.Event != want.event || e.Account != want.account || e.Screenshot != want.shot || e.ScreenshotURL != want.url {
			t.Errorf("event %+v, want %s of %s with %s at %s", e, want.event, want.account, want.shot, want.url)
		}
	}
	// One receiver's events go out in order: a hold told twice would come
	// before this sentinel.
	w.poll()
	n.Notify(Sample(cfg, config.EventLaneStandby))
	if e := h.wait(t, 10*time.Second); e.Event != config.EventLaneStandby || !e.Test {
		t.Errorf("a hold told twice: %+v", e)
	}
}
