package cli

import (
	"flag"
	"io"
	"strings"

	"github.com/spoolgate/spoolgate/spool"
	"github.com/spoolgate/spoolgate/spool/config"
)

// common are the flags every subcommand takes.
type common struct {
	config string
	spool  string

	// store is the process's one Store over the loaded config, sealed
	// with the installation key (load builds it); keyNote says why seals
	// are not checked ("" when they are).
	store   *spool.Store
	keyNote string
}

// newFlags returns a FlagSet with --config and --spool bound to c.
func newFlags(name string, c *common) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.config, "config", "", "config file (default ./spoolgate.yaml if it exists)")
	fs.StringVar(&c.spool, "spool", "", "spool folder (overrides the config)")
	return fs
}

// parseInterspersed parses flags that may stand before or after the
// positional arguments, as INTERFACE.md promises. "--" ends the flags; a
// lone "-" is an argument (stdin).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usagef("%s: %v", fs.Name(), strings.TrimSpace(err.Error()))
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// load reads the config, applies --spool, and builds the process's one
// Store (c.store) with the installation key beside the config.
func (c *common) load() (*config.Config, error) {
	cfg, err := config.LoadConfig(c.config)
	if err != nil {
		return nil, &UsageError{Msg: err.Error()}
	}
	if c.spool != "" {
		cfg.Spool = c.spool
	}
	c.store = spool.NewStore(cfg, nil)
	c.keyNote, _ = useKey(c.store, false, nil) // read-only commands show records unchecked without it
	return cfg, nil
}
