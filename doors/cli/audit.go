package cli

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool"
)

func init() {
	register("audit", "check the audit trail: audit verify [FILE...] prints each break of its chain, exit 1 on any", cmdAudit)
}

// maxForeignShown is how many foreign lines verify names per file; the
// rest are counted (4 MiB of junk is thousands of lines).
const maxForeignShown = 20

// cmdAudit is `spoolgate audit verify [FILE...]`: it reads each month's
// audit file whole (default: every one in <spool>/audit/) and prints each
// break of its chain with its line number (a line deleted, duplicated,
// moved or edited), each line that is not this installation's, and a
// summary per file; it exits 1 when any file has a break. It needs the
// installation key: without it no seal can be checked.
func cmdAudit(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] != "verify" {
		return usagef("audit: want: audit verify [--config FILE] [--spool DIR] [FILE...]")
	}
	var c common
	fs := newFlags("audit verify", &c)
	files, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	if _, err := c.load(); err != nil {
		return err
	}
	st := c.store
	if c.keyNote != "" {
		return fmt.Errorf("audit verify: %s", strings.TrimPrefix(c.keyNote, "seals not checked: "))
	}
	if len(files) == 0 {
		if files, err = st.AuditFiles(); err != nil {
			return err
		}
		if len(files) == 0 {
			fmt.Fprintf(env.Stdout, "no audit files in %s\n", filepath.Join(st.Layout.Root, spool.AuditDir))
			return nil
		}
	}
	breaks := 0
	for _, f := range files {
		rep, err := st.VerifyAudit(f)
		if err != nil {
			return err
		}
		name := safetext.Line(f)
		for _, b := range rep.Breaks {
			fmt.Fprintf(env.Stdout, "%s:%d: break: %s\n", name, b.Line, b.Break)
		}
		for i, fl := range rep.Foreigns {
			if i == maxForeignShown {
				fmt.Fprintf(env.Stdout, "%s: %d more foreign lines\n", name, len(rep.Foreigns)-maxForeignShown)
				break
			}
			fmt.Fprintf(env.Stdout, "%s:%d: foreign: %s\n", name, fl.Line, fl.Foreign)
		}
		summary := fmt.Sprintf("%s: %d sealed lines", name, rep.Sealed)
		if rep.Unchained > 0 {
			summary += fmt.Sprintf(" (%d before the chain)", rep.Unchained)
		}
		summary += fmt.Sprintf(", %d foreign, %d breaks", rep.Foreign, len(rep.Breaks))
		fmt.Fprintln(env.Stdout, summary)
		breaks += len(rep.Breaks)
	}
	if breaks > 0 {
		return &exitErr{code: 1, msg: fmt.Sprintf("audit verify: %d breaks in the chain", breaks)}
	}
	return nil
}

// cliUser is who acts from the command line, as the audit names them:
// the OS user and this machine's host name, "alice@build-01".
func cliUser() string {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if name == "" {
		name = cmp.Or(os.Getenv("USER"), os.Getenv("USERNAME"))
	}
	host, _ := os.Hostname()
	return cmp.Or(name, "unknown") + "@" + cmp.Or(host, "unknown")
}

// cliAudit writes an action of the command line to the audit trail,
// through the code every door uses (Store.AppendAudit). A line not
// written (no installation key here, a folder not writable) is said on
// stderr: the action is done.
func cliAudit(st *spool.Store, env *Env, action string, tasks []string, batch, detail string) {
	err := st.AppendAudit(spool.AuditEntry{Time: time.Now(), User: cliUser(), Door: spool.DoorCLI, Action: action,
		Tasks: tasks, Batch: batch, Detail: detail})
	if err != nil {
		fmt.Fprintf(env.Stderr, "spoolgate: %s: done, but not written to the audit trail: %s\n", action, safetext.Line(err.Error()))
	}
}
