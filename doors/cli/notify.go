package cli

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/spoolgate/spoolgate/lanes/notify"
	"github.com/spoolgate/spoolgate/spool/config"
)

func init() {
	register("notify", "notify test: send a sample event to the command and webhook of notify:", cmdNotify)
}

// cmdNotify: spoolgate notify test [--event NAME]. It sends one sample
// event (test: true) to each receiver at once, one try each, and says how
// each answered: the way to check a webhook or a script before a batch
// depends on it.
func cmdNotify(ctx context.Context, env *Env, args []string) error {
	var c common
	fs := newFlags("notify", &c)
	event := fs.String("event", config.EventBatchFinished, "the event to send a sample of: "+strings.Join(config.Events, ", "))
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "test" {
		return usagef("notify: want `notify test [--event NAME]`")
	}
	if !slices.Contains(config.Events, *event) {
		return usagef("notify test: --event %q: want one of %s", *event, strings.Join(config.Events, ", "))
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	if !cfg.Notify.Enabled() {
		return usagef("notify test: the config has no notify.command or notify.webhook")
	}
	if !cfg.Notify.Wants(*event) {
		fmt.Fprintf(env.Stderr, "note: notify.events leaves %s out: the daemon would not send it\n", *event)
	}
	n := notify.New(cfg, slog.New(slog.DiscardHandler))
	e := notify.Sample(cfg, *event)
	err = n.Send(ctx, e, func(receiver string, err error) {
		if err != nil {
			fmt.Fprintf(env.Stdout, "%s: failed: %v\n", receiver, err)
			return
		}
		fmt.Fprintf(env.Stdout, "%s: sent %s %s\n", receiver, e.Event, e.ID)
	})
	if err != nil {
		return &exitErr{code: 1, msg: ""}
	}
	return nil
}
