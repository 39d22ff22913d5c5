package config

import (
	"strings"
	"testing"
	"time"
)

func TestWarmAndProxyKeys(t *testing.T) {
	cfg, err := ParseConfig([]byte("accounts: {a: {proxy: 'http://u:pw-secret@127.0.0.1:3128'}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Web.Warm
	if w.Off || w.MaxTasks != DefaultWarmMaxTasks || w.Idle.D() != DefaultWarmIdle || w.MaxMemoryMB != DefaultWarmMaxMemoryMB {
		t.Fatalf("web.warm defaults: %+v", w)
	}
	p, err := ParseProxy(cfg.Accounts["a"].Proxy)
	if err != nil || p != (Proxy{Server: "http://127.0.0.1:3128", User: "u", Password: "pw-secret"}) {
		t.Fatalf("ParseProxy: %+v, %v", p, err)
	}
	if cfg, err := ParseConfig([]byte("web: {warm: {off: true, maxTasks: 3, idle: 1m, maxMemoryMB: 500}}\n")); err != nil ||
		cfg.Web.Warm != (WarmConfig{Off: true, MaxTasks: 3, Idle: Duration(time.Minute), MaxMemoryMB: 500}) {
		t.Fatalf("web.warm: %+v, %v", cfg.Web.Warm, err)
	}
	for _, c := range []struct{ in, want string }{
		{"web: {warm: {maxTasks: -1}}", "web.warm.maxTasks: -1 is out of range"},
		{"web: {warm: {maxMemoryMB: 50}}", "web.warm.maxMemoryMB: 50 is below 100"},
		{"web: {warm: {idle: -1s}}", "web.warm.idle"},
		{"web: {warm: {size: 1}}", "web.warm.size: line 1: unknown key"},
		{"accounts: {a: {proxy: 'ftp://u:pw-secret@h:1'}}", `accounts.a.proxy: "ftp://***@h:1": the scheme must be http, https or socks5`},
		{"accounts: {a: {proxy: 'http://u:pw-secret@h'}}", "accounts.a.proxy: \"http://***@h\": it needs a host and a port"},
		{"accounts: {a: {proxy: 'http://h:1/path'}}", "no path or query"},
		{"accounts: {a: {proxy: 'socks5://u:pw-secret@h:1080'}}", "cannot authenticate to a SOCKS5 proxy"},
		{"accounts: {a: {proxy: 'u:pw-secret@h :1'}}", "accounts.a.proxy"},
	} {
		_, err := ParseConfig([]byte(c.in + "\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "pw-secret") {
			t.Errorf("%s: error %v; want one line with %q and no password", c.in, err, c.want)
		}
	}
	if _, err := ParseConfig([]byte("accounts: {a: {proxy: 'socks5://127.0.0.1:1080'}, b: {proxy: 'https://p.example:443'}}\n")); err != nil {
		t.Errorf("socks5 and https proxies: %v", err)
	}
}
