package cli

import (
	"context"
	"log/slog"

	"github.com/spoolgate/spoolgate/lanes/attempt"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// What the command's tests outside this package use: the end-to-end
// suites (e2e/) run this package's Main as `spoolgate` in processes of
// their test binaries, and call a subcommand in-process where a test
// needs its error value.

// Run runs one command line (args without the program name) on env.
func Run(ctx context.Context, args []string, env *Env) error { return run(ctx, args, env) }

// ExecutorsFunc builds each lane's executor from the config.
type ExecutorsFunc = func(cfg *config.Config, env *Env, log *slog.Logger) (map[taskfile.Kind]attempt.Executor, error)

// UseExecutors makes this process's daemons run fn's executors instead of
// the real ones. Only test binaries call it (e2e/rig's fakes, when
// SPOOLGATE_FAKE is set); the spoolgate binary never does.
func UseExecutors(fn ExecutorsFunc) { newExecutors = fn }

// UserHost is who the audit trail names for the command line (user@host).
func UserHost() string { return cliUser() }
