package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"empty is all defaults", "", ""},
		{"unknown key", "spool: x\nspoolz: y\n", "spoolz: line 2: unknown key"},
		{"unknown key under api", "api: {concurency: 3}\n", "api.concurency: line 1: unknown key (known keys under api: concurrency)"},
		{"unknown key in a model", "models: [{name: w, kind: api, baseURL: 'http://x', temprature: 1}]\n", "models[w].temprature: line 1: unknown key"},
		{"unknown key in a site", "sites:\n  s:\n    url: x\n    inptu: y\n", "sites.s.inptu: line 4: unknown key"},
		{"unknown key in an account", "accounts: {ops1: {disable: true}}\n", "accounts.ops1.disable: line 1: unknown key"},
		{"unknown key through a merge", "api:\n  <<: {concurrency: 2, burst: 1}\n", "api.burst: line 2: unknown key"},
		{"wrong kind", "api: {concurrency: many}\n", `api.concurrency: line 1: want a whole number, got "many"`},
		{"list for a mapping", "web: [a]\n", "web: line 1: want a mapping of keys, got a list"},
		{"header not text", "models: [{name: a, kind: api, baseURL: 'http://x', headers: {X: [1]}}]\n", "models[a].headers.X: line 1: want text, got a list"},
		{"not a mapping", "- a\n", "the config must be a mapping"},
		{"concurrency 0", "api: {concurrency: 0}\n", "api.concurrency: 0 is out of range"},
		{"concurrency 6", "api: {concurrency: 6}\n", "api.concurrency: 6 is out of range"},
		{"web concurrency is not a key", "web: {concurrency: 2}\n", "web.concurrency: line 1: unknown key"},
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
		{"bad limitedText", "sites: {s: {url: 'http://x', input: t, send: b, answer: a, limitedText: ['ok', '(']}}\n", "sites.s.limitedText[1]"},
		{"account naming a path", "sites: {s: {url: 'http://x', input: t, send: b, answer: a}}\nmodels: [{name: w, kind: web, site: s, account: '../x'}]\n", "models[w].account"},
		{"site reading keys of issue 18", "sites: {s: {url: 'http://x', input: t, send: b, answer: a, done: .actions, copy: 'button.copy', errorTurn: button.retry, chrome: [.code-head], read: [network, copy, dom], network: {url: /api/chat, format: sse, path: choices.0.delta.content, mode: delta}}}\n", ""},
		{"read: unknown method", "sites: {s: {url: 'http://x', input: t, send: b, answer: a, read: [html]}}\n", `sites.s.read[0]: "html": want one of network, copy, dom, text`},
		{"read: network without network:", "sites: {s: {url: 'http://x', input: t, send: b, answer: a, read: [network]}}\n", "sites.s.read[0]: network needs the site's network: key"},
		{"read: copy without copy:", "sites: {s: {url: 'http://x', input: t, send: b, answer: a, read: [dom, copy]}}\n", "sites.s.read[1]: copy needs"},
		{"read: twice", "sites: {s: {url: 'http://x', input: t, send: b, answer: a, read: [dom, dom]}}\n", `sites.s.read[1]: "dom" is listed twice`},
		{"network: no path", "sites: {s: {url: 'http://x', input: t, send: b, answer: a, network: {url: /api, format: ndjson}}}\n", "sites.s.network: path: missing"},
		{"network: unknown key", "sites: {s: {url: 'http://x', input: t, send: b, answer: a, network: {url: /api, format: text, pth: x}}}\n", "sites.s.network.pth"},
		{"network: a named protocol alone", "sites: {s: {url: 'http://x', input: t, send: b, answer: a, network: {protocol: deepseek-web}}}\n", ""},
		{"network: an unknown protocol", "sites: {s: {url: 'http://x', input: t, send: b, answer: a, network: {protocol: kimi}}}\n", `sites.s.network: protocol: "kimi": want one of`},
		{"network: stream keys as data", "sites: {s: {url: 'http://x', input: t, send: b, answer: a, network: {url: /c, format: sse, events: [X], path: 'a.*.t|b.t', when: {block_type: 10000}, final: f, reasoning: r, reasoningWhen: {type: think}}}}\n", ""},
		{"network: patches of a text body", "sites: {s: {url: 'http://x', input: t, send: b, answer: a, network: {url: /c, format: text, mode: patch}}}\n", "mode: patch: a text body"},
		{"site keys of issue 13", "sites: {s: {url: 'http://x', input: 'chat-app >>> textarea', send: b, answer: a, startTimeout: 20s, continue: button.continue, limited: .limit, limitedText: ['(?i)limit'], limitHold: 30m}}\n", ""},
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
			if goTypeNames.MatchString(err.Error()) {
				t.Errorf("err names Go types: %v", err)
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

// goTypeNames match Go type names that yaml.v3 puts in its messages.
var goTypeNames = regexp.MustCompile(`\b(spool|taskfile|config|status)\.[A-Z]\w+|map\[string\]|\[\](spool|taskfile|config)|\*(spool|taskfile|config)|into (int|bool|string|float64|uint)|time\.Duration`)

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"", "spool: x\n", "api: {concurrency: 5}\n",
		"models:\n  - {name: a, kind: api, baseURL: 'http://x/v1'}\n",
		"models:\n  - {name: w, kind: web, site: s}\nsites:\n  s: {url: 'http://x', input: t, send: b, answer: a}\n",
		"heartbeat: 1s\nstaleAfter: 2s\n", "web: {headless: false}\n", "accounts: {a: {disabled: true}}\n",
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte("api: {concurency: 3}\n"))
	f.Add([]byte("base: &b {concurrency: 2}\napi: {<<: *b}\nmodels: [{name: a, kind: api, baseURL: 'http://x', headers: {<<: {A: b}}}]\n"))
	f.Add([]byte("web: {headless: [1], taskTimeout: {a: 1}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") || goTypeNames.MatchString(err.Error()) {
				t.Fatalf("error not one plain line: %q", err)
			}
			return
		}
		if c.API.Concurrency < 1 || c.API.Concurrency > 5 || c.Heartbeat <= 0 || c.StaleAfter < 2*c.Heartbeat {
			t.Fatalf("accepted an invalid config: %+v", c)
		}
	})
}

// A when value written as a number reads as JSON writes it.
func TestSiteNetwork_WhenNumber(t *testing.T) {
	c, err := ParseConfig([]byte("sites: {s: {url: 'http://x', input: t, send: b, answer: a, network: {protocol: doubao-web, when: {block_type: 10000, ok: true}}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	n := c.Sites["s"].Network.Resolved()
	if n.When["block_type"] != "10000" || n.When["ok"] != "true" || n.URL != "/chat/completion" || n.Final != "msg_finish_attr.brief" {
		t.Fatalf("%+v", n)
	}
}
