package liveview

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
)

// A view is one operator's per account: the same console session gets
// it back, another is told who has it; it streams JPEG frames, refuses
// an event it does not know, and ends by itself when its operator stops
// giving input or at Stop, closing its browser and letting the session go.
func TestViews_OneOperatorIdleStop(t *testing.T) {
	chromium := testkit.NeedChromium(t)
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	stand := testkit.NewSignInStandin(t)
	cfg, err := config.ParseConfig([]byte("host: testhost\nmodels:\n  - {name: thinker, kind: web, site: stand}\nsites:\n" +
		stand.SignInSite("stand") + "accounts:\n  a1: {site: stand}\n"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg.Spool, cfg.Web.Profiles, cfg.Web.Browser = filepath.Join(dir, "spool"), filepath.Join(dir, "profiles"), chromium
	ended := make(chan Ended, 1)
	vs := New(Options{Cfg: cfg, Idle: 6 * time.Second, Poll: 50 * time.Millisecond, Hooks: Hooks{OnEnd: func(e Ended) { ended <- e }}})
	ctx := context.Background()
	if _, _, err := vs.Open(ctx, "a1", "wang", "s1", "127.0.0.1"); !errors.Is(err, ErrStopped) {
		t.Errorf("open before Start: %v", err)
	}
	if err := vs.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer vs.Stop()
	if _, _, err := vs.Open(ctx, "nobody", "wang", "s1", ""); !errors.Is(err, ErrNoSession) {
		t.Errorf("open of an unknown account: %v", err)
	}
	v, opened, err := vs.Open(ctx, "a1", "wang", "s1", "127.0.0.1")
	if err != nil || !opened {
		t.Fatalf("open: %v %v", opened, err)
	}
	if again, opened, err := vs.Open(ctx, "a1", "wang", "s1", ""); err != nil || opened || again != v {
		t.Errorf("the same session's open again: %v %v %v", again == v, opened, err)
	}
	var iu *InUseError
	if _, _, err := vs.Open(ctx, "a1", "li", "s2", ""); !errors.As(err, &iu) || iu.Operator != "wang" {
		t.Errorf("another operator's open: %v", err)
	}
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	f, st := v.Frame(fctx, 0)
	cancel()
	if f.Seq < 1 || !bytes.HasPrefix(f.JPEG, []byte{0xff, 0xd8}) || f.Width <= 0 || f.Height <= 0 || st.Ended != "" || st.SignedIn {
		t.Errorf("first frame: seq %d, %d bytes, %gx%g, state %+v", f.Seq, len(f.JPEG), f.Width, f.Height, st)
	}
	var bad *ErrBadInput
	if err := v.Input(ctx, Input{Kind: "teleport"}); !errors.As(err, &bad) {
		t.Errorf("unknown input: %v", err)
	}
	sess, _ := cfg.WebSession("a1")
	probe := spool.OpenRunnerLock(sess.Lock)
	if err := probe.TryLock("testhost"); !errors.Is(err, spool.ErrLockHeld) {
		t.Errorf("lock while open: %v", err)
		_ = probe.Unlock()
	}
	select {
	case e := <-ended:
		if e.Reason != "idle" || e.Account != "a1" || e.Operator != "wang" || e.Remote != "127.0.0.1" {
			t.Errorf("ended %+v", e)
		}
	case <-time.After(time.Minute):
		t.Fatal("the idle view did not end")
	}
	<-v.Done()
	if vs.Get("a1") != nil {
		t.Error("an ended view is still listed")
	}
	if err := v.Input(ctx, Input{Kind: "text", Text: "x"}); !errors.Is(err, ErrEnded) {
		t.Errorf("input after the end: %v", err)
	}
	lk := spool.OpenRunnerLock(sess.Lock)
	if err := lk.TryLock("testhost"); err != nil {
		t.Errorf("lock after the end: %v", err)
	}
	_ = lk.Unlock()

	// Stop ends an open view the same way: browser closed, session free.
	if _, _, err := vs.Open(ctx, "a1", "li", "s2", "127.0.0.2"); err != nil {
		t.Fatal(err)
	}
	vs.Stop()
	select {
	case e := <-ended:
		if e.Reason != "stopped" || e.Operator != "li" {
			t.Errorf("ended at Stop %+v", e)
		}
	default:
		t.Error("Stop returned before the view had ended")
	}
	if err := lk.TryLock("testhost"); err != nil {
		t.Errorf("lock after Stop: %v", err)
	}
	_ = lk.Unlock()
	vs.Stop()
	if _, _, err := vs.Open(ctx, "a1", "li", "s2", ""); !errors.Is(err, ErrStopped) {
		t.Errorf("open after Stop: %v", err)
	}
}
