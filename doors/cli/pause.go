package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func init() {
	register("pause", "stop claiming in a lane (web|api), or on one account (--account NAME); running work finishes", cmdPause)
	register("resume", "restart claiming in a lane (web|api), or end an account's hold (--account NAME)", cmdResume)
}

// pauseArgs parses `pause|resume [--host H] web|api` and returns the
// switch file: <lane>/paused, or <lane>/paused.<H> for one host only.
func pauseArgs(name string, args []string) (*spool.Store, taskfile.Kind, string, error) {
	var c common
	fs := newFlags(name, &c)
	host := fs.String("host", "", "this host only: the switch is <lane>/paused.HOST (shared spools)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, "", "", err
	}
	if len(pos) != 1 || !taskfile.Kind(pos[0]).Valid() {
		return nil, "", "", usagef("%s: give one lane: web or api", name)
	}
	if !actions.ValidHost(*host) {
		return nil, "", "", usagef("%s: --host %q is not a host name", name, *host)
	}
	if _, err := c.load(); err != nil {
		return nil, "", "", err
	}
	st := c.store
	k := taskfile.Kind(pos[0])
	file, err := actions.PauseFile(st, k, *host)
	if err != nil {
		return nil, "", "", asUsage(err)
	}
	return st, k, file, nil
}

func cmdPause(ctx context.Context, env *Env, args []string) error {
	if hasAccountFlag(args) {
		return cmdPauseAccount(env, args)
	}
	st, k, file, err := pauseArgs("pause", args)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	if err := actions.Pause(st, file, host, time.Now()); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s lane paused (%s): it claims nothing new; running work finishes\n", k, filepath.Base(file))
	cliAudit(st, env, "pause", nil, "", pauseDetail(k, file))
	return nil
}

func cmdResume(ctx context.Context, env *Env, args []string) error {
	if hasAccountFlag(args) {
		return cmdResumeAccount(ctx, env, args)
	}
	st, k, file, err := pauseArgs("resume", args)
	if err != nil {
		return err
	}
	// The timeline shades the pause from the lane's pauses.log once the file is gone.
	nr, err := actions.Resume(file, time.Now())
	if nr != nil {
		fmt.Fprintf(env.Stderr, "resume: the pause is not recorded in %s: %v\n", spool.PausesLog, nr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s lane resumed (%s removed)\n", k, filepath.Base(file))
	cliAudit(st, env, "resume", nil, "", pauseDetail(k, file))
	return nil
}

// pauseDetail is a pause's audit detail, as the console writes it: the
// lane, and " host H" for one host's switch (<lane>/paused.H).
func pauseDetail(k taskfile.Kind, file string) string {
	if h, ok := strings.CutPrefix(filepath.Base(file), "paused."); ok {
		return string(k) + " host " + h
	}
	return string(k)
}

// cmdPauseAccount: spoolgate pause --account NAME holds one account until
// `spoolgate resume --account NAME`: its tasks wait in pending on every
// host; the others run. The task it runs now finishes.
func cmdPauseAccount(env *Env, args []string) error {
	var c common
	fs := newFlags("pause", &c)
	account := fs.String("account", "", "pause this account (a web session) until resume --account")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *account == "" {
		return usagef("pause: give either a lane (web or api) or --account NAME, not both")
	}
	if _, err := c.load(); err != nil {
		return err
	}
	st := c.store
	if err := actions.PauseAccount(st, *account, cliUser(), time.Now()); err != nil {
		return asUsage(err)
	}
	fmt.Fprintf(env.Stdout, "account %s paused: its tasks wait until spoolgate resume --account %s; running work finishes\n", *account, *account)
	cliAudit(st, env, "pause-account", nil, "", "account "+*account)
	return nil
}
