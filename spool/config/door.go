// This file holds the HTTP front door's keys (issue 41): `tokens:`, the
// bearer tokens API clients present, stored hashed, and `door:`, the
// door's limits. The console's own users and sessions live elsewhere.

package config

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// TokenConfig is one entry of `tokens:`, keyed by the token's name (the
// batch of the tasks it submits unless a request names another).
type TokenConfig struct {
	// Hash is "sha256:" and the hex SHA-256 of the token, as `spoolgate
	// token new NAME` prints it; the token itself is never in the config.
	Hash string `yaml:"hash"`
	// Models the token may use, by name; "*" for every model.
	Models []string `yaml:"models"`
	// Rate is what the token may spend: "N/s", "N/m" or "N/h"; "" for
	// no limit. A request costs one, and a submit of N tasks costs N.
	Rate string `yaml:"rate"`
	// Read is which tasks the token may read and wait on: "own" (the
	// default: those it submitted) or "all".
	Read string `yaml:"read"`
	// Act is which tasks the token may cancel and retry: "own" (the
	// default) or "all", which lets it read them all too.
	Act string `yaml:"act"`
	// Allow grants the fields a token may set beyond model, content,
	// prompt and batch: "priority", "output", "attachments" (files from
	// the spool's files/ or attachments.roots). A field not granted is
	// refused with 403, by name.
	Allow []string `yaml:"allow"`
}

// Token scopes, for read and act.
const (
	ScopeOwn = "own"
	ScopeAll = "all"
)

// TokenGrants are the fields `allow:` may grant.
var TokenGrants = []string{"priority", "output", "attachments"}

// ReadsAll reports whether the token may read every task.
func (t TokenConfig) ReadsAll() bool { return t.Read == ScopeAll || t.Act == ScopeAll }

// ActsAll reports whether the token may cancel and retry every task.
func (t TokenConfig) ActsAll() bool { return t.Act == ScopeAll }

// Grants reports whether the token's allow: names field.
func (t TokenConfig) Grants(field string) bool { return slices.Contains(t.Allow, field) }

// DoorConfig is `door:`, the limits of the HTTP front door (the JSON
// task API and /v1/chat/completions on the `http:` address). The door
// answers only when `tokens:` lists at least one token.
type DoorConfig struct {
	// Remote lets clients other than this machine's (a non-loopback
	// peer) use the door when `http:` listens beyond 127.0.0.1; default
	// false: they are refused even then.
	Remote bool `yaml:"remote"`
	// MaxBody is the largest request body in bytes (default 1 MiB, the
	// largest task file).
	MaxBody int64 `yaml:"maxBody"`
	// MaxQueue is how many tasks a lane may have waiting (pending and
	// incoming) before a new request is refused with 429 (default 1000;
	// 0 means the default).
	MaxQueue int `yaml:"maxQueue"`
	// KeepAlive is how often a stream that waits gets a comment line
	// (default 15s, at most 15s).
	KeepAlive Duration `yaml:"keepAlive"`
	// MaxWait bounds one long poll of /api/v1/tasks/.../wait (default 60s).
	MaxWait Duration `yaml:"maxWait"`
}

// TokenHashPrefix begins every `tokens:` hash.
const TokenHashPrefix = "sha256:"

var tokenHashRe = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// TokenRate parses a token's rate, "N/s", "N/m" or "N/h": the requests a
// second it allows (0 for "") and its burst, N: a token unused for the
// whole period may make its N requests at once.
func TokenRate(s string) (perSecond float64, burst int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	n, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	v, err := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err != nil || v <= 0 {
		return 0, 0, fmt.Errorf("%q: want N/s, N/m or N/h with N a whole number above 0", s)
	}
	switch strings.TrimSpace(unit) {
	case "s":
		return float64(v), v, nil
	case "m":
		return float64(v) / 60, v, nil
	case "h":
		return float64(v) / 3600, v, nil
	}
	return 0, 0, fmt.Errorf("%q: want N/s, N/m or N/h", s)
}

// TokenNames lists `tokens:` by name, sorted.
func (c *Config) TokenNames() []string {
	names := make([]string, 0, len(c.Tokens))
	for n := range c.Tokens {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// checkDoor fills the door's defaults and checks `tokens:` and `door:`.
func (c *Config) checkDoor() *ConfigError {
	if c.Door.MaxBody == 0 {
		c.Door.MaxBody = taskfile.MaxTaskSize
	}
	if c.Door.MaxBody < 1024 || c.Door.MaxBody > 64<<20 {
		return &ConfigError{Key: "door.maxBody", Msg: fmt.Sprintf("%d is out of range 1024 to 64 MiB", c.Door.MaxBody)}
	}
	if c.Door.MaxQueue == 0 {
		c.Door.MaxQueue = 1000
	}
	if c.Door.MaxQueue < 0 {
		return &ConfigError{Key: "door.maxQueue", Msg: "may not be negative"}
	}
	if c.Door.KeepAlive == 0 {
		c.Door.KeepAlive = Duration(15 * time.Second)
	}
	if c.Door.KeepAlive.D() < 100*time.Millisecond || c.Door.KeepAlive.D() > 15*time.Second {
		return &ConfigError{Key: "door.keepAlive", Msg: fmt.Sprintf("%s is out of range 100ms to 15s", c.Door.KeepAlive.D())}
	}
	if c.Door.MaxWait == 0 {
		c.Door.MaxWait = Duration(60 * time.Second)
	}
	for _, name := range c.TokenNames() {
		tk := c.Tokens[name]
		key := "tokens." + name
		if !taskfile.ValidTaskID(name) || len(name) > 64 {
			return &ConfigError{Key: key, Msg: "a token's name is letters, digits, '.', '_' or '-' (at most 64): it is the batch of its tasks"}
		}
		if !tokenHashRe.MatchString(tk.Hash) {
			return &ConfigError{Key: key + ".hash", Msg: "want sha256: and 64 lower-case hex digits, as `spoolgate token new " + name + "` prints it (never the token itself)"}
		}
		if len(tk.Models) == 0 {
			return &ConfigError{Key: key + ".models", Msg: "missing: the models the token may use, or [\"*\"] for all"}
		}
		for i, m := range tk.Models {
			if m != "*" && !slices.ContainsFunc(c.Models, func(mc ModelConfig) bool { return mc.Name == m }) {
				return &ConfigError{Key: fmt.Sprintf("%s.models[%d]", key, i), Msg: fmt.Sprintf("%q is not in `models:`", m)}
			}
		}
		if _, _, err := TokenRate(tk.Rate); err != nil {
			return &ConfigError{Key: key + ".rate", Msg: err.Error()}
		}
		for _, f := range []struct{ key, v string }{{"read", tk.Read}, {"act", tk.Act}} {
			if f.v != "" && f.v != ScopeOwn && f.v != ScopeAll {
				return &ConfigError{Key: key + "." + f.key, Msg: fmt.Sprintf("%q: want own (the tasks the token submitted) or all", f.v)}
			}
		}
		for i, g := range tk.Allow {
			if !slices.Contains(TokenGrants, g) {
				return &ConfigError{Key: fmt.Sprintf("%s.allow[%d]", key, i), Msg: fmt.Sprintf("%q is not a field a token can be granted: want %s", g, strings.Join(TokenGrants, ", "))}
			}
		}
		for _, other := range c.TokenNames() {
			if other != name && strings.HasPrefix(name, other+"-") {
				// A token's tasks are named door-NAME-…: with these two,
				// one token's name for a task could be the other's.
				return &ConfigError{Key: key, Msg: fmt.Sprintf("the name begins with token %s's and '-': their tasks' ids (door-NAME-...) could be the same; rename one", other)}
			}
		}
	}
	return nil
}

// Allows reports whether token name may use model.
func (t TokenConfig) Allows(model string) bool {
	return slices.Contains(t.Models, "*") || slices.Contains(t.Models, model)
}
