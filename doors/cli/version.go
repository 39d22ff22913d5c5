package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set by the Makefile with -ldflags "-X
// github.com/spoolgate/spoolgate/doors/cli.version=...".
var version = "dev"

func init() { register("version", "print version and build info", cmdVersion) }

func cmdVersion(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("version", &c)
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = " " + s.Value
			}
		}
	}
	fmt.Fprintf(env.Stdout, "spoolgate %s%s %s %s/%s\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
