package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ConsoleConfig is `console:`: who may act from the pages. With no users
// and no token the pages are read-only, as they always were.
type ConsoleConfig struct {
	// Users maps a login name to its password hash: an argon2id PHC
	// string ($argon2id$v=19$m=...,t=...,p=...$salt$hash) or a bcrypt
	// hash ($2a$, $2b$, $2y$), as `spoolgate passwd NAME` prints one.
	Users map[string]string `yaml:"users"`
	// Token is the hash of one shared token (same formats): whoever
	// gives it logs in as the user "token".
	Token string `yaml:"token"`
	// TLS serves the pages over HTTPS with this certificate and key.
	TLS TLSConfig `yaml:"tls"`
	// Session is how long a login lasts without use (default 12h).
	Session Duration `yaml:"session"`
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
		if !knownHash(cc.Users[n]) {
			return &ConfigError{Key: "console.users." + n, Msg: "not a password hash: want an argon2id or bcrypt hash, as `spoolgate passwd " + n + "` prints"}
		}
	}
	if cc.Token != "" && !knownHash(cc.Token) {
		return &ConfigError{Key: "console.token", Msg: "not a hash: want the hash `spoolgate passwd --token` prints, never the token itself"}
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
