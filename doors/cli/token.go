package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spoolgate/spoolgate/doors/frontdoor"
	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func init() {
	register("token", "token new NAME: make a bearer token for the HTTP front door, printed once, and its tokens: entry", cmdToken)
}

// cmdToken makes a token: the token is printed once, on stdout, and only
// its hash goes in the config, which this command does not edit (it may
// hold comments and be read-only): the operator pastes the entry.
func cmdToken(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("token", &c)
	models := fs.String("models", "*", "the models the token may use, comma-separated (* for all)")
	rate := fs.String("rate", "", "optional: the requests it may make, N/s, N/m or N/h")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 || pos[0] != "new" {
		return usagef("token: give `token new NAME`")
	}
	name := pos[1]
	if !taskfile.ValidTaskID(name) || len(name) > 64 {
		return usagef("token new %q: a name is letters, digits, '.', '_' or '-' (at most 64); it is the batch of its tasks", name)
	}
	var list []string
	for _, m := range strings.Split(*models, ",") {
		if m = strings.TrimSpace(m); m != "" {
			list = append(list, fmt.Sprintf("%q", m))
		}
	}
	if len(list) == 0 {
		return usagef("token: --models names no model")
	}
	if _, _, err := config.TokenRate(*rate); err != nil {
		return usagef("token: --rate %v", err)
	}
	tok, hash := frontdoor.NewToken()
	fmt.Fprintf(env.Stdout, "token (shown this once; spoolgate keeps only its hash):\n\n  %s\n\nadd to spoolgate.yaml and restart the daemon:\n\ntokens:\n  %s:\n    hash: %s\n    models: [%s]\n",
		tok, name, hash, strings.Join(list, ", "))
	if *rate != "" {
		fmt.Fprintf(env.Stdout, "    rate: %q\n", *rate)
	}
	return nil
}
