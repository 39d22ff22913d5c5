package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
)

// login, check and site new take the session's lock alike; a held lock
// names its holder and ends with the command's own advice.
func TestLockSession(t *testing.T) {
	cfg := &config.Config{Host: "here"}
	sess := config.WebSession{Account: "a", Lock: filepath.Join(t.TempDir(), "profiles", "a.lock")}
	unlock, err := lockSession("check", cfg, sess, pauseOrStop)
	if err != nil {
		t.Fatalf("free lock: %v", err)
	}
	unlock()
	held := spool.OpenRunnerLock(sess.Lock) // a daemon's web lane, in another open file
	if err := held.TryLock("daemonhost"); err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	for _, tc := range []struct{ cmd, advice string }{
		{"login", stopDaemon},
		{"check", pauseOrStop},
		{"site", pauseOrStop},
	} {
		_, err := lockSession(tc.cmd, cfg, sess, tc.advice)
		if err == nil {
			t.Fatalf("%s: took a held lock", tc.cmd)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, tc.cmd+": the web profile is in use: "+sess.Lock+" is held by ") ||
			!strings.Contains(msg, "daemonhost") || !strings.HasSuffix(msg, "; "+tc.advice) {
			t.Errorf("%s: %q", tc.cmd, msg)
		}
	}
}
