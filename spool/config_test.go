package spool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"empty is all defaults", "", ""},
		{"unknown key", "spool: x\nspoolz: y\n", "field spoolz not found"},
		{"concurrency 0", "api: {concurrency: 0}\n", "api.concurrency: 0 is out of range"},
		{"concurrency 6", "api: {concurrency: 6}\n", "api.concurrency: 6 is out of range"},
		{"web concurrency is not a key", "web: {concurrency: 2}\n", "field concurrency not found"},
		{"bad duration", "heartbeat: soon\n", `"soon" is not a duration`},
		{"stale below two beats", "heartbeat: 10s\nstaleAfter: 15s\n", "staleAfter"},
		{"model without kind", "models: [{name: a}]\n", "models[a].kind: missing"},
		{"api model without url", "models: [{name: a, kind: api}]\n", "models[a].baseURL: missing"},
		{"bad url", "models: [{name: a, kind: api, baseURL: 'ftp://x'}]\n", "not an http(s) URL"},
		{"web model unknown site", "models: [{name: w, kind: web, site: s}]\n", `models[w].site: "s" is not in`},
		{"duplicate model", "models: [{name: a, kind: api, baseURL: 'http://x'}, {name: a, kind: api, baseURL: 'http://x'}]\n", "name used twice"},
		{"site missing selector", "sites: {s: {url: 'http://x', input: t, send: b}}\n", "sites.s.answer: missing"},
		{"bad host", "host: 'a:b'\n", "host"},
		{"retries", "maxRetries: -1\n", "maxRetries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tt.in))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.API.Concurrency != 3 || c.Heartbeat.D() != 15*time.Second || c.StaleAfter.D() != 90*time.Second ||
					*c.MaxRetries != 2 || c.HTTP != "127.0.0.1:7311" || c.Web.Instance != "default" || !c.Web.IsHeadless() {
					t.Errorf("defaults: %+v", c)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestLoadConfig_RelativeSpool(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "spoolgate.yaml")
	if err := os.WriteFile(p, []byte("spool: ./s\nweb: {profiles: p}\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Spool != filepath.Join(dir, "s") {
		t.Errorf("spool %q, want it relative to the config file", c.Spool)
	}
	if c.Web.Profiles != filepath.Join(dir, "p") {
		t.Errorf("web.profiles %q, want it relative to the config file", c.Web.Profiles)
	}
	if _, err := LoadConfig(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("explicit missing config accepted")
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"", "spool: x\n", "api: {concurrency: 5}\n",
		"models:\n  - {name: a, kind: api, baseURL: 'http://x/v1'}\n",
		"models:\n  - {name: w, kind: web, site: s}\nsites:\n  s: {url: 'http://x', input: t, send: b, answer: a}\n",
		"heartbeat: 1s\nstaleAfter: 2s\n", "web: {headless: false}\n", "accounts: {a: {disabled: true}}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		if c.API.Concurrency < 1 || c.API.Concurrency > 5 || c.Heartbeat <= 0 || c.StaleAfter < 2*c.Heartbeat {
			t.Fatalf("accepted an invalid config: %+v", c)
		}
	})
}
