package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spoolgate/spoolgate/internal/console"
	"github.com/spoolgate/spoolgate/internal/safetext"
)

func init() {
	register("passwd", "print a console user's password hash for the config: passwd NAME (or --token), the password on stdin", cmdPasswd)
}

// cmdPasswd reads a password (its first line) from stdin and prints the
// config line that lets NAME log in to the console with it, or with
// --token the line of the shared token. Nothing is written anywhere.
func cmdPasswd(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("passwd", &c)
	token := fs.Bool("token", false, "hash a shared token (console.token) instead of a user's password")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *token != (len(pos) == 0) || len(pos) > 1 {
		return usagef("passwd: give one user NAME, or --token")
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
	fmt.Fprintf(env.Stdout, "console:\n  users:\n    %s: %q\n", pos[0], h)
	return nil
}
