package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spoolgate/spoolgate/spool"
)

func init() {
	register("pause", "stop claiming in a lane (web|api); running work finishes", cmdPause)
	register("resume", "restart claiming in a lane (web|api)", cmdResume)
}

func pauseArgs(name string, args []string) (*spool.Store, spool.Kind, error) {
	var c common
	fs := newFlags(name, &c)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, "", err
	}
	if len(pos) != 1 || !spool.Kind(pos[0]).Valid() {
		return nil, "", usagef("%s: give one lane: web or api", name)
	}
	cfg, err := c.load()
	if err != nil {
		return nil, "", err
	}
	st := spool.NewStore(cfg, nil)
	if err := st.L.Create(); err != nil {
		return nil, "", err
	}
	return st, spool.Kind(pos[0]), nil
}

func cmdPause(ctx context.Context, env *Env, args []string) error {
	st, k, err := pauseArgs("pause", args)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	note := fmt.Sprintf("paused by %s at %s\n", host, time.Now().UTC().Format(time.RFC3339))
	if err := spool.WriteFileAtomic(st.L.Paused(k), []byte(note)); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s lane paused: it claims nothing new; running work finishes\n", k)
	return nil
}

func cmdResume(ctx context.Context, env *Env, args []string) error {
	st, k, err := pauseArgs("resume", args)
	if err != nil {
		return err
	}
	if err := os.Remove(st.L.Paused(k)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s lane resumed\n", k)
	return nil
}
