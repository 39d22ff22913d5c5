package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/spoolgate/spoolgate/doors/cli"
	"github.com/spoolgate/spoolgate/e2e/rig"
	"github.com/spoolgate/spoolgate/internal/testkit"
	"github.com/spoolgate/spoolgate/spool/config"
)

// TestMain lets the test binary act as `spoolgate` inside the scripts
// (rig.Main).
func TestMain(m *testing.M) { rig.Main(m) }

// TestScripts runs every testdata/script/*.txtar. Each script starts in
// $WORK with HOME=$WORK, TZ=UTC and SPOOLGATE_NOW unset (scripts set it
// with `env` when they need a fixed clock). Extra commands:
//
//	waitfile [-t 20s] PATH...  wait until each PATH exists (! waitfile:
//	                      until none does), polling with a deadline; a
//	                      PATH may be a glob (spool/api/archive/*/done/x.yaml)
//	mtime TIME PATH...    set each PATH's modification time to TIME
//	                      (RFC 3339), e.g. when a drop was rejected
//	readysocket           set NOTIFY_SOCKET for the commands that follow,
//	                      to a socket of the script's own
//	waitready [-t 20s]    wait until a daemon says READY=1 on it (an
//	                      event: no polling)
//	weblock DIR CONTENT   write CONTENT into the web runner lock file of
//	                      the profiles folder DIR (the path hashes the user
//	                      name, so scripts cannot name it themselves)
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(e *testscript.Env) error {
			e.Setenv("HOME", e.WorkDir)
			e.Setenv("TZ", "UTC")
			e.Setenv("XDG_CACHE_HOME", filepath.Join(e.WorkDir, ".cache"))
			e.Setenv("GORACE", os.Getenv("GORACE")) // see TestMain
			e.Setenv("SG_USERHOST", cli.UserHost()) // who the audit names for the command line (audit.go)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfile":    cmdWaitFile,
			"readysocket": cmdReadySocket,
			"waitready":   cmdWaitReady,
			"mtime": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) < 2 {
					ts.Fatalf("usage: mtime TIME PATH...")
				}
				at, err := time.Parse(time.RFC3339, args[0])
				ts.Check(err)
				for _, p := range args[1:] {
					ts.Check(os.Chtimes(ts.MkAbs(p), at, at))
				}
			},
			"weblock": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: weblock DIR CONTENT")
				}
				dir := ts.MkAbs(args[0])
				ts.Check(os.MkdirAll(dir, 0o700))
				ts.Check(os.WriteFile(config.RunnerLockPath(dir), []byte(args[1]+"\n"), 0o600))
			},
		},
		RequireExplicitExec: false,
	})
}

func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	limit := 20 * time.Second
	if len(args) > 1 && args[0] == "-t" {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		limit, args = d, args[2:]
	}
	if len(args) == 0 {
		ts.Fatalf("usage: waitfile [-t DURATION] PATH...")
	}
	deadline := time.Now().Add(limit)
	for _, a := range args {
		p := ts.MkAbs(a)
		if testkit.Until(time.Until(deadline), func() bool { m, _ := filepath.Glob(p); return (len(m) > 0) != neg }) {
			continue
		}
		if neg {
			ts.Fatalf("%s still exists after %s", a, limit)
		}
		ts.Fatalf("%s did not appear within %s", a, limit)
	}
}

// readySockets holds each script's notify socket.
var readySockets sync.Map // *testscript.TestScript -> *net.UnixConn

func cmdReadySocket(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: readysocket")
	}
	dir, err := os.MkdirTemp("", "sg-ready") // a socket path must be short
	ts.Check(err)
	path := filepath.Join(dir, "notify")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	ts.Check(err)
	readySockets.Store(ts, c)
	ts.Defer(func() { c.Close(); os.RemoveAll(dir); readySockets.Delete(ts) })
	ts.Setenv("NOTIFY_SOCKET", path)
}

func cmdWaitReady(ts *testscript.TestScript, neg bool, args []string) {
	limit := 20 * time.Second
	if len(args) == 2 && args[0] == "-t" {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		limit, args = d, nil
	}
	v, ok := readySockets.Load(ts)
	if neg || len(args) != 0 || !ok {
		ts.Fatalf("usage: waitready [-t DURATION], after readysocket")
	}
	c := v.(*net.UnixConn)
	ts.Check(c.SetReadDeadline(time.Now().Add(limit)))
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if err != nil {
			ts.Fatalf("no READY=1 within %s: %v", limit, err)
		}
		for _, line := range strings.Split(string(buf[:n]), "\n") {
			if line == "READY=1" {
				return
			}
		}
	}
}
