// Package cli is the command line's door: spoolgate's subcommands, one
// file each, parsing their flags and wiring the daemon's components;
// cmd/spoolgate's main only calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spoolgate/spoolgate/internal/safetext"
)

// Main runs the command named by os.Args on the process's standard
// streams, stopped by SIGINT or SIGTERM, and returns its exit status.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	return exitCode(run(ctx, os.Args[1:], env), env.Stderr)
}

// Env is the outside world a subcommand sees; tests substitute it.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// UsageError is bad usage or rejected input: exit status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// errSilent is returned when the subcommand already printed its failure.
var errSilent = errors.New("")

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ue *UsageError
	code := 1
	if errors.As(err, &ue) {
		code = 2
	}
	var ec *exitErr
	if errors.As(err, &ec) {
		code = ec.code
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(stderr, "spoolgate: "+safetext.Text(msg)) // messages may quote what users wrote
	}
	return code
}

// exitErr carries a chosen exit code with an already-printed message.
type exitErr struct {
	code int
	msg  string
}

func (e *exitErr) Error() string { return e.msg }

type command struct {
	name  string
	short string
	run   func(ctx context.Context, env *Env, args []string) error
}

// commands is filled by each subcommand's file in its init.
var commands []command

func register(name, short string, fn func(ctx context.Context, env *Env, args []string) error) {
	commands = append(commands, command{name, short, fn})
}

func run(ctx context.Context, args []string, env *Env) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(env.Stderr)
		if len(args) == 0 {
			return usagef("no command given")
		}
		return nil
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, env, args[1:])
		}
	}
	return usagef("unknown command %q (see spoolgate help)", args[0])
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: spoolgate COMMAND [--config FILE] [--spool DIR] [ARGS]")
	fmt.Fprintln(w, "")
	order := []string{"run", "submit", "status", "cancel", "retry", "results", "pause", "resume", "login", "check", "service", "version"}
	for _, name := range order {
		for _, c := range commands {
			if c.name == name {
				fmt.Fprintf(w, "  %-8s %s\n", c.name, c.short)
			}
		}
	}
	// Commands not placed above follow in name order, so none is hidden.
	rest := slices.DeleteFunc(slices.Clone(commands), func(c command) bool { return slices.Contains(order, c.name) })
	slices.SortFunc(rest, func(a, b command) int { return strings.Compare(a.name, b.name) })
	for _, c := range rest {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.short)
	}
}
