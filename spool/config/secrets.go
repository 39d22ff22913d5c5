package config

import (
	"net/url"
	"sort"
)

// KnownSecrets are the secret values this config gives spoolgate: each api
// model's key (read through getenv, as the API lane reads it), the
// console's token, and every proxy's password. What spoolgate writes
// where colleagues read it (a failed attempt's saved page) has them
// masked (issue 49). Door tokens are not among them: the config holds
// only their hashes. Sorted, without repeats or empty values.
func (c *Config) KnownSecrets(getenv func(string) string) []string {
	set := map[string]bool{}
	add := func(s string) {
		if s != "" {
			set[s] = true
		}
	}
	for _, m := range c.Models {
		if m.APIKeyEnv != "" && getenv != nil {
			add(getenv(m.APIKeyEnv))
		}
	}
	add(c.Console.Token)
	for _, a := range c.Accounts {
		if u, err := url.Parse(a.Proxy); err == nil && u.User != nil {
			pw, _ := u.User.Password()
			add(pw)
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
