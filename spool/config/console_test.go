package config

import (
	"strings"
	"testing"
)

func TestConfig_CheckConsole(t *testing.T) {
	const hash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"
	for _, tc := range []struct {
		name, in, wantErr string
		login             bool
	}{
		{name: "none: read-only", in: ""},
		{name: "a user", in: "console: {users: {王芳: '" + hash + "'}}\n", login: true},
		{name: "bcrypt", in: "console: {users: {li: '$2a$10$abcdefghijklmnopqrstuv'}}\n", login: true},
		{name: "a token", in: "console: {token: '" + hash + "'}\n", login: true},
		{name: "a plain password", in: "console: {users: {li: hunter2}}\n", wantErr: "console.users.li: not a password hash"},
		{name: "a plain token", in: "console: {token: s3cret}\n", wantErr: "console.token: not a hash"},
		{name: "a user name with markup", in: "console: {users: {'<b>': '" + hash + "'}}\n", wantErr: "console.users: \"<b>\" is not a user name"},
		{name: "the token's name", in: "console: {users: {token: '" + hash + "'}}\n", wantErr: "is not a user name"},
		{name: "a cert without a key", in: "console: {tls: {cert: c.pem}}\n", wantErr: "console.tls: give both cert and key"},
		{name: "a missing cert", in: "console: {tls: {cert: /nonexistent/c.pem, key: /nonexistent/k.pem}}\n", wantErr: "console.tls.cert"},
		{name: "unknown key", in: "console: {user: {}}\n", wantErr: "console.user: line 1: unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Console.LoginOn() != tc.login || c.Console.Session.D() <= 0 {
				t.Errorf("login %v, session %s", c.Console.LoginOn(), c.Console.Session.D())
			}
		})
	}
}

// TestConfig_ConsoleRoles: console.users takes {hash, role} beside the
// hash alone (from before roles: an admin, as every user was then); a
// role must be one of the three; console.tokenRole defaults to admin;
// console.public is off or counts.
func TestConfig_ConsoleRoles(t *testing.T) {
	const hash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"
	for _, tc := range []struct {
		name, in, wantErr string
		roles             map[string]Role
		tokenRole         Role
		counts            bool
	}{
		{name: "the hash alone is an admin", in: "console: {users: {li: '" + hash + "'}}\n", roles: map[string]Role{"li": RoleAdmin}, tokenRole: RoleAdmin},
		{name: "each role", in: "console:\n  users:\n    v: {hash: '" + hash + "', role: viewer}\n    o: {hash: '" + hash + "', role: operator}\n    a: {hash: '" + hash + "', role: admin}\n    old: '" + hash + "'\n",
			roles: map[string]Role{"v": RoleViewer, "o": RoleOperator, "a": RoleAdmin, "old": RoleAdmin}, tokenRole: RoleAdmin},
		{name: "no role", in: "console: {users: {li: {hash: '" + hash + "'}}}\n", wantErr: `console.users.li.role: "" is not a role: want viewer, operator or admin`},
		{name: "an unknown role", in: "console: {users: {li: {hash: '" + hash + "', role: root}}}\n", wantErr: `console.users.li.role: "root" is not a role`},
		{name: "no hash", in: "console: {users: {li: {role: viewer}}}\n", wantErr: "console.users.li: not a password hash"},
		{name: "an unknown key in a user", in: "console: {users: {li: {hash: '" + hash + "', role: viewer, rights: all}}}\n", wantErr: "console.users.li.rights: line 1: unknown key"},
		{name: "a token's role", in: "console: {token: '" + hash + "', tokenRole: viewer}\n", roles: map[string]Role{}, tokenRole: RoleViewer},
		{name: "a token's unknown role", in: "console: {token: '" + hash + "', tokenRole: boss}\n", wantErr: `console.tokenRole: "boss" is not a role`},
		{name: "public counts", in: "console: {users: {li: '" + hash + "'}, public: counts}\n", roles: map[string]Role{"li": RoleAdmin}, tokenRole: RoleAdmin, counts: true},
		{name: "public off", in: "console: {public: off}\n", roles: map[string]Role{}, tokenRole: RoleAdmin},
		{name: "public everything", in: "console: {public: all}\n", wantErr: `console.public: "all": want off`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for n, r := range tc.roles {
				if got := c.Console.Users[n]; got.Role != r || got.Hash != hash {
					t.Errorf("user %s: %+v, want role %s", n, got, r)
				}
			}
			if len(c.Console.Users) != len(tc.roles) {
				t.Errorf("%d users, want %d", len(c.Console.Users), len(tc.roles))
			}
			if c.Console.TokenRole != tc.tokenRole || c.Console.PublicCountsOn() != tc.counts {
				t.Errorf("tokenRole %q, public counts %v", c.Console.TokenRole, c.Console.PublicCountsOn())
			}
		})
	}
	if !RoleAdmin.Allows(RoleOperator) || RoleViewer.Allows(RoleOperator) || !RoleOperator.Allows(RoleViewer) || Role("").Allows(RoleViewer) {
		t.Error("Allows does not order viewer < operator < admin")
	}
}
