package config

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
)

// WarmConfig is `web.warm:`: a web session keeps its browser and its chat
// page between tasks (a new chat each task) instead of starting Chromium
// for every task, and starts it again after an error, after MaxTasks
// tasks, after Idle without a task, or above MaxMemoryMB.
type WarmConfig struct {
	// Off makes every task start and close its own browser, as before
	// warm sessions.
	Off bool `yaml:"off"`
	// MaxTasks is how many tasks one browser runs before it is started
	// again (default 50): a long-lived page grows.
	MaxTasks int `yaml:"maxTasks"`
	// Idle is how long a warm browser waits for the next task before it
	// closes (default 5m).
	Idle Duration `yaml:"idle"`
	// MaxMemoryMB is the resident memory of the browser's processes,
	// summed, above which it is started again before the next task
	// (default 2048; shared pages count once per process).
	MaxMemoryMB int `yaml:"maxMemoryMB"`
}

// Warm defaults.
const (
	DefaultWarmMaxTasks    = 50
	DefaultWarmIdle        = 5 * time.Minute
	DefaultWarmMaxMemoryMB = 2048
)

// checkWarm fills web.warm's defaults and checks its keys.
func (c *Config) checkWarm() error {
	w := &c.Web.Warm
	if w.MaxTasks == 0 {
		w.MaxTasks = DefaultWarmMaxTasks
	}
	if w.Idle == 0 {
		w.Idle = Duration(DefaultWarmIdle)
	}
	if w.MaxMemoryMB == 0 {
		w.MaxMemoryMB = DefaultWarmMaxMemoryMB
	}
	switch {
	case w.MaxTasks < 1 || w.MaxTasks > 10000:
		return &ConfigError{Key: "web.warm.maxTasks", Msg: fmt.Sprintf("%d is out of range 1 to 10000", w.MaxTasks)}
	case w.Idle.D() < 0:
		return &ConfigError{Key: "web.warm.idle", Msg: fmt.Sprintf("%s is negative", w.Idle.D())}
	case w.MaxMemoryMB < 100:
		return &ConfigError{Key: "web.warm.maxMemoryMB", Msg: fmt.Sprintf("%d is below 100 (a signed-in chat page alone takes more)", w.MaxMemoryMB)}
	}
	return nil
}

// checkProxies checks each account's proxy: an http, https or socks5 URL
// with a host and port and nothing else; the message never repeats the
// credentials.
func (c *Config) checkProxies() error {
	for _, n := range slices.Sorted(maps.Keys(c.Accounts)) {
		if a := c.Accounts[n]; a.Proxy == "" {
			continue
		}
		if _, err := ParseProxy(c.Accounts[n].Proxy); err != nil {
			return &ConfigError{Key: "accounts." + n + ".proxy", Msg: err.Error()}
		}
	}
	return nil
}

// Proxy is an account's proxy, taken apart: Server is what Chromium's
// --proxy-server gets (scheme://host:port, no credentials), User and
// Password the credentials, if any, for the proxy's 407 challenge.
type Proxy struct {
	Server, User, Password string
}

// ParseProxy reads an account's proxy URL (http://, https:// or
// socks5://, credentials allowed: http://user:pass@host:port). Its errors
// show the URL redacted.
func ParseProxy(s string) (Proxy, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Proxy{}, fmt.Errorf("%q is not a URL", RedactProxy(s))
	}
	red := RedactProxy(s)
	switch {
	case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5":
		return Proxy{}, fmt.Errorf("%q: the scheme must be http, https or socks5", red)
	case u.Hostname() == "" || u.Port() == "":
		return Proxy{}, fmt.Errorf("%q: it needs a host and a port (http://proxy.example:3128)", red)
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return Proxy{}, fmt.Errorf("%q: a proxy is scheme://[user:password@]host:port, with no path or query", red)
	case u.User != nil && u.Scheme == "socks5":
		// Chromium has no SOCKS authentication, and CDP's 407 challenge
		// is HTTP's: the credentials would be silently unused.
		return Proxy{}, fmt.Errorf("%q: Chromium cannot authenticate to a SOCKS5 proxy; use one without credentials or an http(s) proxy", red)
	}
	p := Proxy{Server: u.Scheme + "://" + u.Host}
	if u.User != nil {
		p.User = u.User.Username()
		p.Password, _ = u.User.Password()
	}
	return p, nil
}

// RedactProxy is a proxy URL fit for a log or a page: whatever precedes
// its last '@' after the scheme (the credentials, however malformed) is
// replaced by "***". It works on the text, not a parse, so that a URL too
// broken to parse is redacted too.
func RedactProxy(s string) string {
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return s
	}
	if i := strings.Index(s, "://"); i >= 0 && i < at {
		return s[:i+3] + "***" + s[at:]
	}
	return "***" + s[at:]
}
