// This file holds the reading and checking of spoolgate.yaml: LoadConfig
// and ParseConfig, Check with its defaults and per-key checks, and the
// ConfigError that names a bad key.

package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
	"gopkg.in/yaml.v3"
)

// ConfigError is a start-up error about one key.
type ConfigError struct {
	Path string // the config file, may be empty
	Key  string
	Msg  string
}

func (e *ConfigError) Error() string {
	where := "config"
	if e.Path != "" {
		where = e.Path
	}
	if e.Key == "" {
		return fmt.Sprintf("%s: %s", where, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", where, e.Key, e.Msg)
}

// DefaultConfigFile is read when --config is not given and it exists.
const DefaultConfigFile = "spoolgate.yaml"

// LoadConfig reads and checks a config file. An empty path means
// DefaultConfigFile if it exists, else all defaults.
func LoadConfig(path string) (*Config, error) {
	explicit := path != ""
	if !explicit {
		path = DefaultConfigFile
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if !explicit && errors.Is(err, os.ErrNotExist) {
			c := &Config{}
			if err := c.Check(); err != nil {
				return nil, err
			}
			return c, nil
		}
		return nil, fmt.Errorf("read config: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			ce.Path = path
			return nil, ce
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Path = path
	// A relative spool in a config file is relative to the file, so a
	// service started from another directory finds the same spool.
	if c.Spool != "" && !filepath.IsAbs(c.Spool) {
		c.Spool = filepath.Join(filepath.Dir(path), c.Spool)
	}
	if p := c.Web.Profiles; p != "" && !filepath.IsAbs(p) {
		// Relative to the config file, like spool (the default is absolute).
		c.Web.Profiles = filepath.Join(filepath.Dir(path), p)
	}
	return c, nil
}

// ParseConfig parses config YAML strictly and applies defaults and checks:
// an unknown key at any depth is an error naming its path.
func ParseConfig(data []byte) (*Config, error) {
	if len(data) > 4<<20 {
		return nil, &ConfigError{Msg: "file is larger than 4 MiB"}
	}
	c := &Config{}
	if len(bytes.TrimSpace(data)) > 0 {
		// Parse, check every key at every depth by its path (see
		// configkeys.go), then decode.
		var doc yaml.Node
		if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil && err != io.EOF {
			return nil, &ConfigError{Msg: plainYAMLError(err)}
		}
		if cerr := checkConfigKeys(&doc); cerr != nil {
			return nil, cerr
		}
		if err := doc.Decode(c); err != nil {
			return nil, &ConfigError{Msg: plainYAMLError(err)}
		}
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// Check fills defaults and validates every key, naming the first bad one.
func (c *Config) Check() error {
	if c.Spool == "" {
		c.Spool = "./spool"
	}
	if c.Host == "" {
		h, err := os.Hostname()
		if err != nil || h == "" {
			h = "localhost"
		}
		c.Host = h
	}
	if strings.ContainsAny(c.Host, ": \t\n/") {
		return &ConfigError{Key: "host", Msg: fmt.Sprintf("%q may not contain ':', '/' or spaces", c.Host)}
	}
	def := func(d *Duration, v time.Duration) {
		if *d == 0 {
			*d = Duration(v)
		}
	}
	def(&c.Settle, 2*time.Second)
	def(&c.Rescan, 5*time.Second)
	def(&c.Heartbeat, 15*time.Second)
	def(&c.StaleAfter, 90*time.Second)
	def(&c.RetryBackoff, 30*time.Second)
	def(&c.ShutdownGrace, 30*time.Second)
	def(&c.Web.TaskTimeout, 15*time.Minute)
	def(&c.Web.ReattachWait, DefaultReattachWait)
	if c.MaxRetries == nil {
		two := 2
		c.MaxRetries = &two
	}
	if *c.MaxRetries < 0 || *c.MaxRetries > 100 {
		return &ConfigError{Key: "maxRetries", Msg: fmt.Sprintf("%d is out of range 0 to 100", *c.MaxRetries)}
	}
	if c.StaleAfter.D() < 2*c.Heartbeat.D() {
		return &ConfigError{Key: "staleAfter", Msg: fmt.Sprintf("%s must be at least twice heartbeat (%s)", c.StaleAfter.D(), c.Heartbeat.D())}
	}
	if c.HTTP == "" {
		c.HTTP = "127.0.0.1:7311"
	}
	if c.API.Concurrency == 0 && !c.API.set {
		c.API.Concurrency = 3
	}
	if c.API.Concurrency < 1 || c.API.Concurrency > 5 {
		return &ConfigError{Key: "api.concurrency", Msg: fmt.Sprintf("%d is out of range: the API lane runs 1 to 5 at once (default 3)", c.API.Concurrency)}
	}
	if c.Web.Instance == "" {
		c.Web.Instance = "default"
	}
	if !taskfile.ValidTaskID(c.Web.Instance) {
		return &ConfigError{Key: "web.instance", Msg: fmt.Sprintf("%q must be letters, digits, '.', '_' or '-'", c.Web.Instance)}
	}
	if c.Web.Profiles == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		c.Web.Profiles = filepath.Join(dir, "spoolgate", "profiles")
	}
	seen := map[string]bool{}
	for i := range c.Models {
		m := &c.Models[i]
		key := fmt.Sprintf("models[%d]", i)
		if m.Name == "" {
			return &ConfigError{Key: key + ".name", Msg: "missing"}
		}
		key = fmt.Sprintf("models[%s]", m.Name)
		if seen[m.Name] {
			return &ConfigError{Key: key, Msg: "name used twice"}
		}
		seen[m.Name] = true
		if m.Timeout == 0 {
			m.Timeout = Duration(120 * time.Second)
		}
		if err := checkModelKeys(key, m); err != nil {
			return err
		}
		switch m.Kind {
		case taskfile.KindAPI:
			if len(m.Modes) > 0 {
				return &ConfigError{Key: key + ".modes", Msg: "an api model has no page modes: modes are for web models"}
			}
			if m.BaseURL == "" {
				return &ConfigError{Key: key + ".baseURL", Msg: "missing (an OpenAI-compatible endpoint such as https://api.example.com/v1)"}
			}
			if u, err := url.Parse(m.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return &ConfigError{Key: key + ".baseURL", Msg: fmt.Sprintf("%q is not an http(s) URL", m.BaseURL)}
			}
			if m.Model == "" {
				m.Model = m.Name
			}
			if p := m.Price; p != nil && (p.Input < 0 || p.Output < 0 || p.Cached != nil && *p.Cached < 0) {
				return &ConfigError{Key: key + ".price", Msg: "input and output are what a million tokens cost: not negative"}
			}
			for j, f := range m.RequestFields {
				if !taskfile.IsSamplingField(f) {
					return &ConfigError{Key: fmt.Sprintf("%s.requestFields[%d]", key, j), Msg: fmt.Sprintf("%q is not one of %v", f, taskfile.SamplingFields)}
				}
			}
			if err := pick(key+".maxTokensField", &m.MaxTokensField, MaxTokensDefault, MaxCompletionTokens); err != nil {
				return err
			}
		case taskfile.KindWeb:
			if len(m.RequestFields) > 0 {
				return &ConfigError{Key: key + ".requestFields", Msg: "a web model takes no per-task sampling: its page has no such control"}
			}
			if m.Price != nil {
				return &ConfigError{Key: key + ".price", Msg: "a web model reports no tokens to price"}
			}
			if m.Site == "" {
				return &ConfigError{Key: key + ".site", Msg: "missing: a web model names one of `sites:`"}
			}
			site, ok := c.Sites[m.Site]
			if !ok {
				return &ConfigError{Key: key + ".site", Msg: fmt.Sprintf("%q is not in `sites:`", m.Site)}
			}
			if err := checkModelModes(key, m, site); err != nil {
				return err
			}
		case "":
			return &ConfigError{Key: key + ".kind", Msg: "missing: web or api"}
		default:
			return &ConfigError{Key: key + ".kind", Msg: fmt.Sprintf("%q is not web or api", m.Kind)}
		}
	}
	if err := c.checkOps(); err != nil {
		return err
	}
	if err := c.checkDoor(); err != nil {
		return err
	}
	if err := c.checkAttachments(); err != nil {
		return err
	}
	if err := c.checkConsole(); err != nil {
		return err
	}
	if err := c.checkArtifacts(); err != nil {
		return err
	}
	if err := c.checkArtifacts(); err != nil {
		return err
	}
	if err := c.checkSessions(); err != nil {
		return err
	}
	if err := c.checkWarm(); err != nil {
		return err
	}
	if err := c.checkProxies(); err != nil {
		return err
	}
	for _, n := range slices.Sorted(maps.Keys(c.Accounts)) {
		if p := c.Accounts[n].Pace; p != nil {
			if err := p.check("accounts." + n + ".pace"); err != nil {
				return err
			}
		}
	}
	names := make([]string, 0, len(c.Sites))
	for n := range c.Sites {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		s := c.Sites[n]
		for _, f := range []struct{ k, v string }{{"url", s.URL}, {"input", s.Input}, {"send", s.Send}, {"answer", s.Answer}} {
			if f.v == "" {
				return &ConfigError{Key: "sites." + n + "." + f.k, Msg: "missing"}
			}
		}
		if s.Conversation != "" {
			if _, err := regexp.Compile(s.Conversation); err != nil {
				return &ConfigError{Key: "sites." + n + ".conversation", Msg: fmt.Sprintf("%q is not a regular expression: %v", s.Conversation, err)}
			}
		}
		for i, p := range s.LimitedText {
			if _, err := regexp.Compile(p); err != nil {
				return &ConfigError{Key: fmt.Sprintf("sites.%s.limitedText[%d]", n, i), Msg: fmt.Sprintf("%q is not a regular expression: %v", p, err)}
			}
		}
		if err := s.checkReading("sites." + n); err != nil {
			return err
		}
		if err := s.checkUpload("sites." + n); err != nil {
			return err
		}
		if err := checkArtifactsFrom("sites."+n+".artifactsFrom", s.ArtifactsFrom); err != nil {
			return err
		}
		if s.Pace != nil {
			if err := s.Pace.check("sites." + n + ".pace"); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkReading checks the keys of how the site's answer is read.
func (s SiteConfig) checkReading(key string) *ConfigError {
	if s.Network != nil {
		if err := s.Network.Check(); err != nil {
			return &ConfigError{Key: key + ".network", Msg: err.Error()}
		}
	}
	seen := map[string]bool{}
	for i, m := range s.Read {
		k := fmt.Sprintf("%s.read[%d]", key, i)
		switch {
		case !slices.Contains(ReadMethods, m):
			return &ConfigError{Key: k, Msg: fmt.Sprintf("%q: want one of %s", m, strings.Join(ReadMethods, ", "))}
		case seen[m]:
			return &ConfigError{Key: k, Msg: fmt.Sprintf("%q is listed twice", m)}
		case m == "network" && s.Network == nil:
			return &ConfigError{Key: k, Msg: "network needs the site's network: key (the answer's request URL and its format)"}
		case m == "copy" && s.Copy == "":
			return &ConfigError{Key: k, Msg: "copy needs the site's copy: key (the answer's copy button)"}
		}
		seen[m] = true
	}
	if s.Verify != "" && s.Verify != VerifyMark && s.Verify != VerifyStrict && s.Verify != VerifyOff {
		return &ConfigError{Key: key + ".verify", Msg: fmt.Sprintf("%q: want mark, strict or off", s.Verify)}
	}
	for i, c := range s.Chrome {
		if strings.TrimSpace(c) == "" {
			return &ConfigError{Key: fmt.Sprintf("%s.chrome[%d]", key, i), Msg: "empty selector"}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Modes)) {
		if err := s.Modes[name].check(); err != nil {
			return &ConfigError{Key: key + ".modes." + name, Msg: err.Error()}
		}
	}
	return nil
}

// check says what is wrong with a site's mode, or nil.
func (m SiteMode) check() error {
	switch {
	case m.Switch != "" && m.Menu != "":
		return errors.New("a mode is a switch or a menu, not both")
	case m.Switch != "":
		if m.Option != "" || m.Chosen != "" {
			return errors.New("option and chosen belong to a menu, not a switch")
		}
		if m.State != "aria-pressed" && m.State != "aria-checked" && (!strings.HasPrefix(m.State, "class:") || strings.TrimSpace(m.State[len("class:"):]) == "") {
			return fmt.Errorf("state: %q: want aria-pressed, aria-checked or class:NAME (how the switch shows it is on)", m.State)
		}
	case m.Menu != "":
		if m.Option == "" {
			return errors.New("option: missing: the menu's choices (the one whose text is the model's value is clicked)")
		}
		if m.State != "" {
			return errors.New("state belongs to a switch; a menu is read back by its chosen label")
		}
	default:
		return errors.New("missing switch (a toggle) or menu (a picker)")
	}
	return nil
}

// checkModelModes checks a web model's modes against its site's.
func checkModelModes(key string, m *ModelConfig, site SiteConfig) *ConfigError {
	for _, name := range slices.Sorted(maps.Keys(m.Modes)) {
		v := m.Modes[name]
		sm, ok := site.Modes[name]
		switch {
		case !ok:
			known := strings.Join(slices.Sorted(maps.Keys(site.Modes)), ", ")
			if known == "" {
				known = "none"
			}
			return &ConfigError{Key: key + ".modes." + name, Msg: fmt.Sprintf("site %q has no mode %q (its modes: %s)", m.Site, name, known)}
		case sm.Switch != "" && v != ModeOn && v != ModeOff:
			return &ConfigError{Key: key + ".modes." + name, Msg: fmt.Sprintf("%q: a switch is on or off", v)}
		case strings.TrimSpace(v) == "":
			return &ConfigError{Key: key + ".modes." + name, Msg: "empty: the menu's label to choose"}
		}
	}
	return nil
}
