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
