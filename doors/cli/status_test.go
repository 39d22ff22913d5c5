package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/fixture"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestStatus_WatchRedrawsUntilCanceled(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	frames := strings.Split(watchFrames(t, cfg.Spool, 3), "\x1b[H\x1b[2J")
	if !strings.Contains(frames[1], "api lane  concurrency 3") || !strings.Contains(frames[1], "batches") {
		t.Errorf("frame: %q", frames[1])
	}
}

// watchFrames runs `status --watch` on spool until it has drawn n frames,
// then cancels it and returns all it wrote.
func watchFrames(t *testing.T, spool string, n int) string {
	t.Helper()
	var out testkit.Buffer
	env := &Env{Stdout: &out, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"status", "--spool", spool, "--watch", "--interval", "20ms"}, env)
	}()
	testkit.Wait(t, fmt.Sprintf("%d redraws", n), 10*time.Second, func() bool {
		return strings.Count(out.String(), "\x1b[H\x1b[2J") >= n
	})
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("watch ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not end with its context")
	}
	return out.String()
}

// TestStatus_WatchEscapes: --watch redraws with its own clear-screen
// sequence and nothing else that drives the terminal, whatever the spool's
// files hold.
func TestStatus_WatchEscapes(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := fixture.Spool(t)
	fixture.PutHostileTask(t, cfg, taskfile.DirPending)
	text := strings.ReplaceAll(watchFrames(t, cfg.Spool, 2), "\x1b[H\x1b[2J", "")
	for _, bad := range []string{"\x1b", "\a", "\u009b", "\u202e"} {
		if strings.Contains(text, bad) {
			t.Errorf("watch output holds %q raw: %q", bad, text)
		}
	}
	if !strings.Contains(text, `\x1b[2J\x1b]0;pwned\x07\x9b31m\u202eevil`) {
		t.Errorf("the batch is not shown escaped: %q", text)
	}
}
