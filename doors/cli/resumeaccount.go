package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/doors/actions"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// hasAccountFlag reports whether resume was asked to end an account's
// hold rather than a lane's pause.
func hasAccountFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "account" {
			return true
		}
	}
	return false
}

// cmdResumeAccount: spoolgate resume --account NAME ends the usage-limit
// hold on an account by hand (its hold file in <spool>/accounts/), so its
// tasks are tried at the next round of any daemon on the spool.
func cmdResumeAccount(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("resume", &c)
	account := fs.String("account", "", "end the usage-limit hold of this account")
	lease := fs.Bool("lease", false, "also clear the account's lease (a stuck one: another host's that is gone, or one blocked by a foreign file)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *account == "" {
		return usagef("resume: give either a lane (web or api) or --account NAME, not both")
	}
	if !taskfile.ValidAccount(*account) {
		return usagef("resume: --account %q is not an account name", *account)
	}
	if _, err := c.load(); err != nil {
		return err
	}
	st := c.store
	leaseCleared := false
	if *lease {
		if c.keyNote != "" {
			return fmt.Errorf("resume --account %s --lease: %s", *account, strings.TrimPrefix(c.keyNote, "seals not checked: "))
		}
		was, held, err := st.ClearAccountLease(*account, time.Now())
		if err != nil {
			return fmt.Errorf("resume --account %s --lease: %w", *account, err)
		}
		if held {
			leaseCleared = true
			fmt.Fprintf(env.Stdout, "account %s: lease cleared (it was %s); any host may take it now\n", safetext.Text(*account), safetext.Text(was.By()))
		} else {
			fmt.Fprintf(env.Stdout, "account %s: lease was free\n", *account)
		}
	}
	out, h, err := actions.ReleaseAccount(st, *account, time.Now())
	if err != nil {
		return asUsage(err)
	}
	if out == actions.ReleaseEnded || out == actions.ReleaseRemoved || leaseCleared {
		detail := "account " + *account
		if leaseCleared {
			detail += ", lease cleared"
		}
		cliAudit(st, env, "release", nil, "", detail)
	}
	switch out {
	case actions.ReleaseForeign:
		fmt.Fprintf(env.Stdout, "account %s: accounts/%s%s is a foreign file (not written by a daemon of this installation): it holds nothing and is left in place\n", *account, *account, taskfile.HeldExt)
	case actions.ReleaseNotHeld:
		if !*lease {
			fmt.Fprintf(env.Stdout, "account %s was not held\n", *account)
		}
	case actions.ReleaseEnded:
		fmt.Fprintf(env.Stdout, "account %s: hold ended by hand (it was %s: %s); its tasks are tried again\n", *account, holdWhat(h), h.Reason)
	default:
		fmt.Fprintf(env.Stdout, "account %s: hold file removed\n", *account)
	}
	return nil
}

// holdWhat names a hold as the operator reads it: "held by a usage limit
// until T" (in local time), "signed out", "held by a challenge", "paused
// by an operator".
func holdWhat(h taskfile.Hold) string {
	if h.Kind != taskfile.HoldLimit {
		return h.What()
	}
	return "held by a usage limit until " + h.Until.Local().Format(time.RFC3339)
}
