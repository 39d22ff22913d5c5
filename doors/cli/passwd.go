package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spoolgate/spoolgate/doors/console"
	"github.com/spoolgate/spoolgate/internal/safetext"
	"github.com/spoolgate/spoolgate/spool/config"
)

func init() {
	register("passwd", "print a console user's password hash for the config: passwd NAME [--role viewer|operator|admin] (or --token), the password on stdin", cmdPasswd)
}

// cmdPasswd reads a password (its first line) from stdin and prints the
// config line that lets NAME log in to the console with it, or with
// --token the line of the shared token. Nothing is written anywhere.
func cmdPasswd(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("passwd", &c)
	token := fs.Bool("token", false, "hash a shared token (console.token) instead of a user's password")
	role := fs.String("role", "", "the user's role: viewer, operator or admin (without it, the line has the hash alone: an admin)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *token != (len(pos) == 0) || len(pos) > 1 {
		return usagef("passwd: give one user NAME, or --token")
	}
	if *role != "" && (*token || !config.Role(*role).Valid()) {
		return usagef("passwd: --role is viewer, operator or admin, for a user (a token's role is console.tokenRole)")
	}
	if len(pos) == 1 && (pos[0] == "" || strings.ContainsAny(pos[0], " \t\r\n\"<>&") || len(pos[0]) > 64 || safetext.Line(pos[0]) != pos[0]) {
		return usagef("passwd: %q is not a user name (printable, no spaces or markup characters, at most 64 bytes)", safetext.Line(pos[0]))
	}
	fmt.Fprintln(env.Stderr, "password (one line, then Enter; it is read from stdin and echoed by a terminal):")
	line, err := bufio.NewReader(io.LimitReader(env.Stdin, 4096)).ReadString('\n')
	if err != nil && err != io.EOF {
		return err
	}
	pw := strings.TrimRight(line, "\r\n")
	if len(pw) < 8 {
		return usagef("passwd: at least 8 characters")
	}
	h, err := console.HashPassword(pw)
	if err != nil {
		return err
	}
	if *token {
		fmt.Fprintf(env.Stdout, "console:\n  token: %q\n", h)
		return nil
	}
	if *role != "" {
		fmt.Fprintf(env.Stdout, "console:\n  users:\n    %s: {hash: %q, role: %s}\n", pos[0], h, *role)
		return nil
	}
	fmt.Fprintf(env.Stdout, "console:\n  users:\n    %s: %q\n", pos[0], h)
	return nil
}
