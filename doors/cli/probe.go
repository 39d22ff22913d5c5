package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"

	"github.com/spoolgate/spoolgate/spool"
)

func init() {
	register("probe", "check what a folder's file system offers the spool protocol (before trusting a share)", cmdProbe)
}

// cmdProbe is `spoolgate probe [--json] [--lock] [DIR...]`: the checks
// `run` does at start-up, on the given folders (default: the config's
// spool, one folder per file system). It exits 1 when a folder has no
// safe claim protocol.
func cmdProbe(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("probe", &c)
	asJSON := fs.Bool("json", false, "print the probes as JSON")
	lock := fs.Bool("lock", false, "take an flock in DIR and hold it until interrupted; run it on a second host to see whether flock is shared between hosts")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *lock {
		if len(pos) != 1 {
			return usagef("probe --lock: give one folder")
		}
		return probeLock(ctx, env, pos[0])
	}
	var probes []*spool.Probe
	var refusal error
	if len(pos) == 0 {
		_, err := c.load()
		if err != nil {
			return err
		}
		st := c.store
		if err := st.Layout.Create(); err != nil {
			return err
		}
		probes, refusal = st.ProbeSpool()
	} else {
		for _, d := range pos {
			fi, err := os.Stat(d)
			if err != nil {
				return err
			}
			if !fi.IsDir() {
				return usagef("probe: %s is not a folder", d)
			}
			abs, _ := filepath.Abs(d)
			p := spool.ProbeDir(abs, "") // a folder given without a config: this machine's name
			probes = append(probes, p)
			if err := p.Refusal(); err != nil && refusal == nil {
				refusal = err
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(probes); err != nil {
			return err
		}
	} else {
		for _, p := range probes {
			fmt.Fprintln(env.Stdout, p.Line)
		}
		fmt.Fprintln(env.Stdout, spool.NotProbed)
	}
	return refusal
}

// probeLock holds an flock in dir until ctx ends, or reports that another
// process (on this host or, if flock is shared, on another) holds it.
func probeLock(ctx context.Context, env *Env, dir string) error {
	p := filepath.Join(dir, ".sg-probe.lock")
	fl := flock.New(p)
	ok, err := fl.TryLock()
	if err != nil {
		return fmt.Errorf("probe --lock: %w", err)
	}
	if !ok {
		fmt.Fprintf(env.Stdout, "%s is held by another process: if that is `spoolgate probe --lock` on another host, flock is shared between hosts here\n", p)
		return nil
	}
	defer fl.Unlock()
	fmt.Fprintf(env.Stdout, "holding %s: run `spoolgate probe --lock %s` on the other host now; if it also gets the lock, flock is NOT shared between hosts. Interrupt to end.\n", p, dir)
	<-ctx.Done()
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	return ctx.Err()
}
