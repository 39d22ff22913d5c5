package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/doors/console"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
)

// login --remote prints the console's link to the account's live view
// (the config's host name for a console on every address), without
// taking the session's lock: the daemon's console takes it when the page
// opens. Without a console login it says why nobody could open it.
func TestLoginRemote(t *testing.T) {
	dir := t.TempDir()
	hash, err := console.HashPassword("pw")
	if err != nil {
		t.Fatal(err)
	}
	write := func(httpAddr, users string) string {
		p := filepath.Join(dir, "spoolgate.yaml")
		body := "spool: " + filepath.Join(dir, "spool") + "\nhost: consolehost\nhttp: " + httpAddr + "\n" + users +
			"web: {profiles: " + filepath.Join(dir, "profiles") + "}\nmodels:\n  - {name: thinker, kind: web, site: stand}\n" +
			"sites:\n  stand: {url: \"http://127.0.0.1:1/\", input: textarea, send: button, answer: .a, loggedOut: a.login}\n" +
			"accounts:\n  a1: {site: stand}\n  a2: {site: stand}\n"
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	login := func(cfgPath string) (string, error) {
		var out, errOut bytes.Buffer
		env := &Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
		err := run(context.Background(), []string{"login", "stand", "--account", "a2", "--remote", "--config", cfgPath}, env)
		return out.String(), err
	}
	users := "console: {users: {wang: '" + hash + "'}}\n"
	cfgPath := write("0.0.0.0:7399", users)
	cfg, err := config.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := cfg.WebSession("a2")
	held := spool.OpenRunnerLock(sess.Lock) // the daemon's lane
	if err := held.TryLock("consolehost"); err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	out, err := login(cfgPath)
	if err != nil || !strings.Contains(out, "from the page: http://consolehost:7399/live/a2\n") {
		t.Errorf("login --remote: %v\n%s", err, out)
	}
	if out, err := login(write("127.0.0.1:7311", users)); err != nil || !strings.Contains(out, "http://127.0.0.1:7311/live/a2\n") {
		t.Errorf("login --remote on 127.0.0.1: %v\n%s", err, out)
	}
	if _, err := login(write("127.0.0.1:7311", "")); err == nil || !strings.Contains(err.Error(), "console has no login") {
		t.Errorf("login --remote without console users: %v", err)
	}
}
