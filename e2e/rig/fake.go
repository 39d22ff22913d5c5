package rig

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spoolgate/spoolgate/doors/cli"
	"github.com/spoolgate/spoolgate/examples/bench"
	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/lanes/lanestest"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// In a test binary run as spoolgate (Main), SPOOLGATE_FAKE=1 makes `spoolgate run` use the fake
// executors of lanestest (registered only in tests): an exclusive fake chat
// session for the web lane and a quota-enforcing fake for the API lane.
// SPOOLGATE_FAKE_TRACE=DIR appends each call's start and end to
// DIR/web.trace and DIR/api.trace, so a test can check from outside that
// the web lane never overlapped, across kills and restarts.
// SPOOLGATE_FAKE_SCALE multiplies [[duration=...]] directives.
// SPOOLGATE_FAKE_CHAT=URL sends the web lane's calls to the chat stand-in's
// HTTP form at URL instead (examples/bench.ChatHTTP: one generation per
// account, each session's account its user), so a test counts what the
// stand-in saw per account across hosts.
func useFakes() {
	if os.Getenv("SPOOLGATE_FAKE") == "" {
		return
	}
	cli.UseExecutors(func(cfg *config.Config, env *cli.Env, log *slog.Logger) (map[taskfile.Kind]attempt.Executor, error) {
		scale, _ := strconv.ParseFloat(os.Getenv("SPOOLGATE_FAKE_SCALE"), 64)
		trace := os.Getenv("SPOOLGATE_FAKE_TRACE")
		web := &lanestest.Fake{Exclusive: true, Scale: scale}
		api := &lanestest.Fake{Quota: cfg.API.Concurrency, Scale: scale}
		if trace != "" {
			web.Trace, api.Trace = filepath.Join(trace, "web.trace"), filepath.Join(trace, "api.trace")
		}
		if u := os.Getenv("SPOOLGATE_FAKE_CHAT"); u != "" {
			return map[taskfile.Kind]attempt.Executor{taskfile.KindWeb: &bench.ChatHTTP{URL: u}, taskfile.KindAPI: api}, nil
		}
		return map[taskfile.Kind]attempt.Executor{taskfile.KindWeb: web, taskfile.KindAPI: api}, nil
	})
}
