package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ConsoleConfig is `console:`: who may act from the pages. With no users
// and no token the pages are read-only, as they always were.
type ConsoleConfig struct {
	// Users maps a login name to its password hash and role: either
	// `name: {hash: HASH, role: viewer|operator|admin}` or, as before
	// roles, `name: HASH`, which is an admin (what every user could do
	// then). A hash is an argon2id PHC string
	// ($argon2id$v=19$m=...,t=...,p=...$salt$hash) or a bcrypt hash ($2a$,
	// $2b$, $2y$), as `spoolgate passwd NAME` prints one.
	Users map[string]ConsoleUser `yaml:"users"`
	// Token is the hash of one shared token (same formats): whoever
	// gives it logs in as the user "token", with TokenRole.
	Token string `yaml:"token"`
	// TokenRole is the shared token's role (default admin: what the
	// token could do before roles).
	TokenRole Role `yaml:"tokenRole"`
	// Public is what a visitor who has not logged in sees when logins are
	// configured: "" or "off" (default) only the login page; "counts" the
	// overview's counts (each lane's task counts, progress and ETA, no
	// task id, batch, file name or text) and /metrics.
	Public string `yaml:"public"`
	// TLS serves the pages over HTTPS with this certificate and key.
	TLS TLSConfig `yaml:"tls"`
	// Session is how long a login lasts without use (default 12h).
	Session Duration `yaml:"session"`
	// TrustedProxies are the reverse proxies (CIDRs or addresses) whose
	// X-Forwarded-For names the client a login's failures are counted
	// against (console_proxies.go); from any other peer it is ignored.
	TrustedProxies []string `yaml:"trustedProxies"`
}

// Role is what a console user may do: RoleViewer reads every page,
// RoleOperator also submits, imports, cancels, retries, sets priorities
// and pauses lanes, RoleAdmin also ends account holds and opens the live
// view.
type Role string

// The roles, least first.
const (
	RoleViewer   Role = "viewer"
	RoleOperator Role = "operator"
	RoleAdmin    Role = "admin"
)

// PublicCounts is console.public's one value besides off.
const PublicCounts = "counts"

// rank orders the roles; 0 is no role.
func (r Role) rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleOperator:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { return r.rank() > 0 }

// Allows reports whether a user of role r may do what needs role need.
func (r Role) Allows(need Role) bool { return r.Valid() && r.rank() >= need.rank() }

// ConsoleUser is one entry of console.users.
type ConsoleUser struct {
	Hash string `yaml:"hash"`
	Role Role   `yaml:"role"`
}

// UnmarshalYAML reads the mapping {hash, role} or, the form from before
// roles, the hash alone, which is an admin.
func (u *ConsoleUser) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		u.Hash, u.Role = n.Value, RoleAdmin
		return nil
	}
	type plain ConsoleUser
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*u = ConsoleUser(p)
	return nil
}

// TLSConfig is a certificate and its key, PEM files.
type TLSConfig struct {
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// TokenUser is the user a shared-token login acts as.
const TokenUser = "token"

// LoginOn reports whether anyone can log in, so the pages offer actions.
func (c ConsoleConfig) LoginOn() bool { return len(c.Users) > 0 || c.Token != "" }

// PublicCountsOn reports whether a visitor who has not logged in sees the
// overview's counts (console.public: counts) rather than only the login.
func (c ConsoleConfig) PublicCountsOn() bool { return c.Public == PublicCounts }

// TLSOn reports whether the pages are served over HTTPS.
func (c ConsoleConfig) TLSOn() bool { return c.TLS.Cert != "" }

// knownHash reports whether h looks like a hash spoolgate can check.
func knownHash(h string) bool {
	for _, p := range []string{"$argon2id$", "$2a$", "$2b$", "$2y$"} {
		if strings.HasPrefix(h, p) {
			return true
		}
	}
	return false
}

// validUser: a login name is shown on pages and written to the audit
// log: printable, no spaces or control characters, at most 64 bytes.
func validUser(name string) bool {
	if name == "" || len(name) > 64 || name == TokenUser {
		return false
	}
	for _, r := range name {
		if r <= ' ' || r == 0x7f || r == '"' || r == '<' || r == '>' || r == '&' || (r >= 0x80 && r <= 0x9f) || (r >= 0x200b && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return false
		}
	}
	return true
}

// checkConsole fills console's defaults and checks its keys.
func (c *Config) checkConsole() error {
	cc := &c.Console
	if cc.Session == 0 {
		cc.Session = Duration(12 * time.Hour)
	}
	names := make([]string, 0, len(cc.Users))
	for n := range cc.Users {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !validUser(n) {
			return &ConfigError{Key: "console.users", Msg: fmt.Sprintf("%q is not a user name (printable, no spaces or markup characters, at most 64 bytes, not %q)", n, TokenUser)}
		}
		u := cc.Users[n]
		if !knownHash(u.Hash) {
			return &ConfigError{Key: "console.users." + n, Msg: "not a password hash: want an argon2id or bcrypt hash, as `spoolgate passwd " + n + "` prints"}
		}
		if !u.Role.Valid() {
			return &ConfigError{Key: "console.users." + n + ".role", Msg: fmt.Sprintf("%q is not a role: want viewer, operator or admin", string(u.Role))}
		}
	}
	if cc.Token != "" && !knownHash(cc.Token) {
		return &ConfigError{Key: "console.token", Msg: "not a hash: want the hash `spoolgate passwd --token` prints, never the token itself"}
	}
	if cc.TokenRole == "" {
		cc.TokenRole = RoleAdmin
	}
	if !cc.TokenRole.Valid() {
		return &ConfigError{Key: "console.tokenRole", Msg: fmt.Sprintf("%q is not a role: want viewer, operator or admin", string(cc.TokenRole))}
	}
	switch cc.Public {
	case "", "off", PublicCounts:
	default:
		return &ConfigError{Key: "console.public", Msg: fmt.Sprintf("%q: want off (only the login page without a login) or counts (the overview's counts too)", cc.Public)}
	}
	if err := cc.checkTrustedProxies(); err != nil {
		return err
	}
	if (cc.TLS.Cert == "") != (cc.TLS.Key == "") {
		return &ConfigError{Key: "console.tls", Msg: "give both cert and key (PEM files)"}
	}
	for _, f := range []struct {
		k string
		v *string
	}{{"cert", &cc.TLS.Cert}, {"key", &cc.TLS.Key}} {
		if *f.v == "" {
			continue
		}
		if !filepath.IsAbs(*f.v) && c.Path != "" { // relative to the config, as spool is
			*f.v = filepath.Join(filepath.Dir(c.Path), *f.v)
		}
		if _, err := os.Stat(*f.v); err != nil {
			return &ConfigError{Key: "console.tls." + f.k, Msg: err.Error()}
		}
	}
	return nil
}
