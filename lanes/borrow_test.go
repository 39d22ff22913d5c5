package lanes_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// A session borrowed by the console's live view (spool.RunnerLock.Borrow)
// claims nothing: its pinned tasks wait in pending, unpinned ones run on
// the other session, and once the view lets it go its tasks run there.
func TestLane_SessionBorrowed(t *testing.T) {
	cfg := sessionConfig(t, []string{"a1", "a2"}, `  - {name: chat, kind: web, site: standin}
  - {name: on1, kind: web, site: standin, account: a1}`)
	r := start(t, cfg)
	drop(t, cfg, taskfile.KindWeb, "first", "on1", "[[duration=20ms]] x")
	waitFinal(t, r, taskfile.KindWeb, "first", 20*time.Second) // the lane holds a1's lock
	sess, _ := cfg.WebSession("a1")
	release, err := spool.OpenRunnerLock(sess.Lock).Borrow(cfg.Host, "live view of wang")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	drop(t, cfg, taskfile.KindWeb, "late1", "on1", "[[duration=20ms]] x")
	for i := range 3 {
		drop(t, cfg, taskfile.KindWeb, fmt.Sprintf("u-%d", i), "chat", "[[duration=20ms]] x")
	}
	r.sig.wait(t, 10*time.Second, "a1's session idle while borrowed", func() bool {
		return r.sig.held["web: account a1 signing in: its tasks wait"]
	})
	for i := range 3 {
		id := fmt.Sprintf("u-%d", i)
		waitFinal(t, r, taskfile.KindWeb, id, 20*time.Second)
		if on := r.web.RanOn(id); !slices.Equal(on, []string{"a2"}) {
			t.Fatalf("%s ran on %v while a1 was borrowed", id, on)
		}
	}
	if _, err := r.store.Read(taskfile.KindWeb, taskfile.DirPending, "late1"); err != nil || r.web.Calls("late1") != 0 {
		t.Fatalf("late1, pinned to the borrowed a1, should wait in pending: %v, %d calls", err, r.web.Calls("late1"))
	}
	release()
	waitFinal(t, r, taskfile.KindWeb, "late1", 20*time.Second)
	if on := r.web.RanOn("late1"); !slices.Equal(on, []string{"a1"}) {
		t.Fatalf("late1 ran on %v, want a1", on)
	}
}
