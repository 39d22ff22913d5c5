package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func init() {
	register("pause", "stop claiming in a lane (web|api); running work finishes", cmdPause)
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
	if *host != "" && (strings.ContainsAny(*host, `/\: `) || strings.HasPrefix(*host, ".")) {
		return nil, "", "", usagef("%s: --host %q is not a host name", name, *host)
	}
	if _, err := c.load(); err != nil {
		return nil, "", "", err
	}
	st := c.store
	if err := st.Layout.Create(); err != nil {
		return nil, "", "", err
	}
	k := taskfile.Kind(pos[0])
	file := st.Layout.Paused(k)
	if *host != "" {
		file += "." + *host
	}
	return st, k, file, nil
}

func cmdPause(ctx context.Context, env *Env, args []string) error {
	st, k, file, err := pauseArgs("pause", args)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	note := fmt.Sprintf("paused by %s at %s\n", host, time.Now().UTC().Format(time.RFC3339))
	if err := st.WriteFileAtomic(file, []byte(note)); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s lane paused (%s): it claims nothing new; running work finishes\n", k, filepath.Base(file))
	return nil
}

func cmdResume(ctx context.Context, env *Env, args []string) error {
	if hasAccountFlag(args) {
		return cmdResumeAccount(ctx, env, args)
	}
	_, k, file, err := pauseArgs("resume", args)
	if err != nil {
		return err
	}
	// The timeline shades the pause from the lane's pauses.log once the file is gone.
	if err := spool.RecordResume(file, time.Now()); err != nil {
		fmt.Fprintf(env.Stderr, "resume: the pause is not recorded in %s: %v\n", spool.PausesLog, err)
	}
	if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s lane resumed (%s removed)\n", k, filepath.Base(file))
	return nil
}
