package config

import (
	"path/filepath"
	"strings"
	"testing"
)

const sessionsSites = `
web: {profiles: /p, instance: inst}
sites:
  chat: {url: "http://127.0.0.1:1/", input: i, send: s, answer: a}
  other: {url: "http://127.0.0.1:2/", input: i, send: s, answer: a}
`

func TestConfig_WebSessions(t *testing.T) {
	lock := func(acct string) string {
		if acct == "" {
			return RunnerLockPath("/p")
		}
		return filepath.Join("/p", "web-runner-"+userHash()+"-"+acct+".lock")
	}
	tests := []struct {
		name string
		yaml string
		want []WebSession
	}{
		{"one web model, no accounts: today's profile and lock", `
models: [{name: w, kind: web, site: chat}]`,
			[]WebSession{{Account: "default", Site: "chat", Profile: "/p/inst", Lock: lock(""), Legacy: true}}},
		{"one pinned account keeps today's paths", `
models: [{name: w, kind: web, site: chat, account: alice}]`,
			[]WebSession{{Account: "alice", Site: "chat", Profile: "/p/inst", Lock: lock(""), Legacy: true}}},
		{"accounts without sites: one session, as before", `
models: [{name: w, kind: web, site: chat, account: ops1}, {name: v, kind: web, site: chat, account: ops2}, {name: u, kind: web, site: other}]`,
			[]WebSession{{Account: "ops1", Site: "chat", Profile: "/p/inst", Lock: lock(""), Legacy: true}}},
		{"one account with a site: today's paths, one session", `
accounts: {alice: {site: chat}}
models: [{name: w, kind: web, site: chat}]`,
			[]WebSession{{Account: "alice", Site: "chat", Profile: "/p/inst", Lock: lock("")}}},
		{"two accounts of one site, unpinned model", `
accounts: {a1: {site: chat}, a2: {site: chat}}
models: [{name: w, kind: web, site: chat}]`,
			[]WebSession{
				{Account: "a1", Site: "chat", Profile: "/p/inst", Lock: lock("")},
				{Account: "a2", Site: "chat", Profile: "/p/inst-a2", Lock: lock("a2")}}},
		{"models' order first, profiles absolute or relative", `
accounts: {a1: {site: chat, profile: /elsewhere/x}, zz: {site: chat, profile: rel}}
models: [{name: w, kind: web, site: chat, accounts: [zz, a1]}]`,
			[]WebSession{
				{Account: "zz", Site: "chat", Profile: "/p/rel", Lock: lock("")},
				{Account: "a1", Site: "chat", Profile: "/elsewhere/x", Lock: lock("a1")}}},
		{"two sites without accounts share the default session", `
models: [{name: w, kind: web, site: chat}, {name: v, kind: web, site: other}]`,
			[]WebSession{{Account: "default", Site: "chat", Profile: "/p/inst", Lock: lock(""), Legacy: true}}},
		{"no web model, no session", `
models: [{name: a, kind: api, baseURL: "http://127.0.0.1:1/v1"}]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(sessionsSites + tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			got := c.WebSessions()
			if len(got) != len(tt.want) {
				t.Fatalf("sessions = %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("session %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestConfig_WebSessionsErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"account and accounts", `
models: [{name: w, kind: web, site: chat, account: a, accounts: [b]}]`, "models[w].accounts: set account (one) or accounts (several), not both"},
		{"account of another site", `
accounts: {a: {site: other}}
models: [{name: w, kind: web, site: chat, account: a}]`, `models[w].account: account "a" signs in to site "other"`},
		{"unknown site", `
accounts: {a: {site: nope}}`, `accounts.a.site: "nope" is not in`},
		{"profile without site", `
accounts: {a: {profile: x}}`, "accounts.a.profile: set only with accounts.a.site"},
		{"bad name", `
models: [{name: w, kind: web, site: chat, accounts: ["../x"]}]`, "models[w].accounts[0]: \"../x\" must be letters"},
		{"named twice", `
models: [{name: w, kind: web, site: chat, accounts: [a, a]}]`, `models[w].accounts[1]: "a" is named twice`},
		{"one profile, two sessions", `
accounts: {a: {site: chat, profile: same}, b: {site: chat, profile: same}}`, "accounts.b.profile: /p/same is also account \"a\"'s profile"},
		{"api model with account", `
models: [{name: x, kind: api, baseURL: "http://127.0.0.1:1/v1", account: a}]`, "models[x].account: only web models run on accounts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(sessionsSites + tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestWebSession_May(t *testing.T) {
	s := WebSession{Account: "a1", Site: "chat"}
	type entry struct {
		Site   string
		Pinned []string
	}
	tests := []struct {
		e    entry
		want bool
	}{
		{entry{Site: "chat"}, true},
		{entry{Site: "other"}, false},
		{entry{Site: "chat", Pinned: []string{"a2"}}, false},
		{entry{Site: "chat", Pinned: []string{"a2", "a1"}}, true},
		{entry{Site: "other", Pinned: []string{"a1"}}, true},
	}
	legacy := WebSession{Account: "ops1", Site: "chat", Legacy: true}
	if !legacy.May("other", []string{"ops2"}) {
		t.Error("the legacy session runs every web task")
	}
	for _, tt := range tests {
		if got := s.May(tt.e.Site, tt.e.Pinned); got != tt.want {
			t.Errorf("May(%+v) = %v, want %v", tt.e, got, tt.want)
		}
	}
}
