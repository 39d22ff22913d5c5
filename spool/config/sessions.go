package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

// DefaultAccount is the account of a web model whose site has no account
// in `accounts:`: the single session every install had before accounts.
const DefaultAccount = "default"

// WebSession is one account on one site in one browser profile. It runs
// exactly one task at a time (see RunnerLock); the web lane's parallelism
// comes only from having several.
type WebSession struct {
	Account string `json:"account"`
	Site    string `json:"site"`
	// Profile is the session's browser profile folder (0700).
	Profile string `json:"profile"`
	// Lock is the session's OS lock file (see RunnerLock).
	Lock string `json:"lock"`
	// Legacy marks the one session of a config where no account declares
	// its site (every config before sessions): it runs the tasks of every
	// web model, and an account's switch or hold keeps that account's
	// tasks waiting, not the session.
	Legacy bool `json:"legacy,omitempty"`
}

// WebSessions lists the web sessions of the config. A config where some
// account declares its site (accounts.NAME.site) has one session per
// account, in order: accounts as the web models first name them (account,
// then accounts), then the other accounts that declare a site, by name. A
// config where none does has one session, as before sessions (Legacy). The first session keeps the paths
// every install had before accounts, so an existing login carries over:
// profile <web.profiles>/<web.instance>, lock web-runner-<h>.lock. The
// others default to <web.profiles>/<web.instance>-NAME and
// web-runner-<h>-NAME.lock.
// Paths are worked out at each call from web.profiles and web.instance as
// they are then.
func (c *Config) WebSessions() []WebSession {
	out := make([]WebSession, len(c.sessions))
	for i, s := range c.sessions {
		out[i] = c.sessionPaths(i, s)
	}
	return out
}

func (c *Config) sessionPaths(i int, s WebSession) WebSession {
	acct := s.Account
	s.Lock = sessionLockPath(c.Web.Profiles, acct)
	if i == 0 {
		// The lock every install had before accounts: a daemon of the
		// previous release and this one exclude each other.
		s.Lock = RunnerLockPath(c.Web.Profiles)
	}
	switch p := c.Accounts[acct].Profile; {
	case p != "" && filepath.IsAbs(p):
		s.Profile = filepath.Clean(p)
	case p != "":
		s.Profile = filepath.Join(c.Web.Profiles, p)
	case i == 0:
		s.Profile = filepath.Join(c.Web.Profiles, c.Web.Instance)
	default:
		s.Profile = filepath.Join(c.Web.Profiles, c.Web.Instance+"-"+acct)
	}
	return s
}

// WebSession returns the session of account.
func (c *Config) WebSession(account string) (WebSession, bool) {
	for i, s := range c.sessions {
		if s.Account == account {
			return c.sessionPaths(i, s), true
		}
	}
	return WebSession{}, false
}

// Pinned returns the accounts a web model may run on; none means any
// session of its site.
func (m *ModelConfig) Pinned() []string {
	if m.Account != "" {
		return []string{m.Account}
	}
	return m.Accounts
}

// checkSessions resolves web models' accounts and the sessions, and names
// the first key that makes them ambiguous.
func (c *Config) checkSessions() error {
	c.sessions = nil
	legacy := !slices.ContainsFunc(slices.Collect(maps.Values(c.Accounts)), func(a AccountConf) bool { return a.Site != "" })
	if legacy {
		// As before sessions: a web model without an account is the
		// default account's.
		for i := range c.Models {
			if m := &c.Models[i]; m.Kind == taskfile.KindWeb && len(m.Pinned()) == 0 {
				m.Account = DefaultAccount
			}
		}
	}
	site := map[string]string{} // account -> site
	var order []string
	add := func(acct, s, key string) error {
		if !taskfile.ValidTaskID(acct) {
			return &ConfigError{Key: key, Msg: fmt.Sprintf("%q must be letters, digits, '.', '_' or '-' (it names files in <spool>/accounts/ and the session's profile)", acct)}
		}
		if a, ok := c.Accounts[acct]; ok && a.Site != "" && a.Site != s {
			return &ConfigError{Key: key, Msg: fmt.Sprintf("account %q signs in to site %q (accounts.%s.site), not %q: one account is one site", acct, a.Site, acct, s)}
		}
		// An account without a site of its own that models of two sites
		// name stays one session (as before accounts, one profile signed
		// in to both): it runs the tasks pinned to it, of either site.
		if _, ok := site[acct]; !ok {
			site[acct] = s
			order = append(order, acct)
		}
		return nil
	}
	names := slices.Sorted(maps.Keys(c.Accounts))
	for _, n := range names {
		a := c.Accounts[n]
		if !taskfile.ValidTaskID(n) {
			return &ConfigError{Key: "accounts." + n, Msg: "an account's name must be letters, digits, '.', '_' or '-'"}
		}
		if a.Site != "" {
			if _, ok := c.Sites[a.Site]; !ok {
				return &ConfigError{Key: "accounts." + n + ".site", Msg: fmt.Sprintf("%q is not in `sites:`", a.Site)}
			}
		}
		if a.Profile != "" && a.Site == "" {
			return &ConfigError{Key: "accounts." + n + ".profile", Msg: "set only with accounts." + n + ".site (a profile belongs to a web session)"}
		}
	}
	// Pinned models first: they give accounts without a site their site.
	for i := range c.Models {
		m := &c.Models[i]
		if m.Kind != taskfile.KindWeb {
			if m.Account != "" || len(m.Accounts) > 0 {
				return &ConfigError{Key: "models[" + m.Name + "].account", Msg: "only web models run on accounts"}
			}
			continue
		}
		key := "models[" + m.Name + "]"
		if m.Account != "" && len(m.Accounts) > 0 {
			return &ConfigError{Key: key + ".accounts", Msg: "set account (one) or accounts (several), not both"}
		}
		seen := map[string]bool{}
		for j, a := range m.Pinned() {
			k := key + ".account"
			if m.Account == "" {
				k = fmt.Sprintf("%s.accounts[%d]", key, j)
			}
			if seen[a] {
				return &ConfigError{Key: k, Msg: fmt.Sprintf("%q is named twice", a)}
			}
			seen[a] = true
			if err := add(a, m.Site, k); err != nil {
				return err
			}
		}
	}
	// Accounts that declare their site, by name.
	for _, n := range names {
		if a := c.Accounts[n]; a.Site != "" {
			if err := add(n, a.Site, "accounts."+n+".site"); err != nil {
				return err
			}
		}
	}
	// Unpinned models run on any session of their site; a site without
	// any account has the one default session, as before accounts.
	for i := range c.Models {
		m := &c.Models[i]
		if m.Kind != taskfile.KindWeb || len(m.Pinned()) > 0 {
			continue
		}
		if !slices.ContainsFunc(order, func(a string) bool { return site[a] == m.Site }) {
			m.Account = DefaultAccount
			if err := add(DefaultAccount, m.Site, "models["+m.Name+"].site"); err != nil {
				return err
			}
		}
		// Otherwise it stays unpinned: the lane gives it to any free
		// session whose site is the model's.
	}
	if legacy && len(order) > 0 {
		// One session, named by the first account the web models name.
		order = order[:1]
	}
	for _, acct := range order {
		c.sessions = append(c.sessions, WebSession{Account: acct, Site: site[acct], Legacy: legacy})
	}
	profiles := map[string]string{}
	for _, s := range c.WebSessions() {
		if other, ok := profiles[s.Profile]; ok {
			return &ConfigError{Key: "accounts." + s.Account + ".profile", Msg: fmt.Sprintf("%s is also account %q's profile: each session needs its own", s.Profile, other)}
		}
		profiles[s.Profile] = s.Account
	}
	return nil
}

// May reports whether the session may run a pending task of a model of
// site pinned to the accounts pinned: a task pinned to accounts runs only
// on theirs, an unpinned one on any session of its site.
func (s WebSession) May(site string, pinned []string) bool {
	if s.Legacy {
		return true
	}
	if len(pinned) > 0 {
		return slices.Contains(pinned, s.Account)
	}
	return site == s.Site
}
