package notify

import (
	"context"
	"fmt"
	"github.com/spoolgate/spoolgate/spool/config"
	"sync"
	"testing"
	"time"
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
