package config

import (
	"strings"
	"testing"
)

// A token's rights: read and act are own or all, allow names only the
// fields a token can be granted, and two tokens' task names cannot clash.
// Each refusal is one line that names the key.
func TestConfig_TokenRights(t *testing.T) {
	const hash = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	const hash2 = "sha256:1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	base := "models: [{name: a, kind: api, baseURL: 'http://x/v1'}]\ntokens:\n"
	tests := []struct {
		name, tokens string
		wantErr      string
		check        func(t *testing.T, c *Config)
	}{
		{"defaults: own, nothing granted", "  cms: {hash: " + hash + ", models: [a]}\n", "", func(t *testing.T, c *Config) {
			tk := c.Tokens["cms"]
			if tk.ReadsAll() || tk.ActsAll() || tk.Grants("priority") || tk.Grants("output") || tk.Grants("attachments") {
				t.Errorf("a token without read, act or allow: %+v", tk)
			}
		}},
		{"all granted", "  cms: {hash: " + hash + ", models: [a], read: all, act: all, allow: [priority, output, attachments]}\n", "", func(t *testing.T, c *Config) {
			tk := c.Tokens["cms"]
			if !tk.ReadsAll() || !tk.ActsAll() || !tk.Grants("priority") || !tk.Grants("output") || !tk.Grants("attachments") {
				t.Errorf("a token granted everything: %+v", tk)
			}
		}},
		{"act all reads all", "  cms: {hash: " + hash + ", models: [a], act: all}\n", "", func(t *testing.T, c *Config) {
			if !c.Tokens["cms"].ReadsAll() {
				t.Error("act: all without read: all does not read all")
			}
		}},
		{"read own", "  cms: {hash: " + hash + ", models: [a], read: own}\n", "", nil},
		{"bad read", "  cms: {hash: " + hash + ", models: [a], read: everyone}\n", `tokens.cms.read: "everyone": want own`, nil},
		{"bad act", "  cms: {hash: " + hash + ", models: [a], act: mine}\n", `tokens.cms.act: "mine": want own`, nil},
		{"unknown grant", "  cms: {hash: " + hash + ", models: [a], allow: [priority, lane]}\n", `tokens.cms.allow[1]: "lane" is not a field a token can be granted: want priority, output, attachments`, nil},
		{"names that clash", "  cms: {hash: " + hash + ", models: [a]}\n  cms-b: {hash: " + hash2 + ", models: [a]}\n", "tokens.cms-b: the name begins with token cms's and '-'", nil},
		{"names that do not clash", "  cms: {hash: " + hash + ", models: [a]}\n  cmsb: {hash: " + hash2 + ", models: [a]}\n", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(base + tt.tokens))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %v; want one line containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}
