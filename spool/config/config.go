// Package config is spoolgate.yaml: parsed strictly, defaulted and
// checked, with the timings derived from it and the web sessions it
// declares. It imports the task format (taskfile) only.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration such as 15s", n.Line)
	}
	if strings.HasPrefix(strings.TrimSpace(n.Value), "-") {
		return fmt.Errorf("line %d: duration %q is negative", n.Line, n.Value)
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (such as 15s, 2m, 30d)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// Config is spoolgate.yaml. Every key is optional; Defaults fills them.
type Config struct {
	Spool         string                 `yaml:"spool"`
	Host          string                 `yaml:"host"`
	Settle        Duration               `yaml:"settle"`
	Rescan        Duration               `yaml:"rescan"`
	Poll          bool                   `yaml:"poll"`
	Heartbeat     Duration               `yaml:"heartbeat"`
	StaleAfter    Duration               `yaml:"staleAfter"`
	MaxRetries    *int                   `yaml:"maxRetries"`
	RetryBackoff  Duration               `yaml:"retryBackoff"`
	ShutdownGrace Duration               `yaml:"shutdownGrace"`
	HTTP          string                 `yaml:"http"`
	API           APIConfig              `yaml:"api"`
	Web           WebConfig              `yaml:"web"`
	Models        []ModelConfig          `yaml:"models"`
	Sites         map[string]SiteConfig  `yaml:"sites"`
	Accounts      map[string]AccountConf `yaml:"accounts"`
	Notify        NotifyConfig           `yaml:"notify"`
	Retention     RetentionConfig        `yaml:"retention"`
	AgingAfter    Duration               `yaml:"agingAfter"`

	// Path is the file the config was read from, if any; not a key.
	Path string `yaml:"-"`

	sessions []WebSession // accounts and sites of the web sessions, by checkSessions
}

// APIConfig holds the API lane's settings.
type APIConfig struct {
	Concurrency int `yaml:"concurrency"`

	set bool // the key was present, so a literal 0 is an error, not the default
}

// WebConfig holds the web lane's settings. Its concurrency is 1, always,
// and deliberately not a key: see WebConcurrency.
type WebConfig struct {
	Browser     string   `yaml:"browser"`
	Headless    *bool    `yaml:"headless"`
	Profiles    string   `yaml:"profiles"`
	Instance    string   `yaml:"instance"`
	TaskTimeout Duration `yaml:"taskTimeout"`
	// ReattachWait is how long a task whose prompt was sent waits for its
	// conversation's account (switched off, held, leased by another
	// host) before another account may send it again (default 10m).
	ReattachWait Duration `yaml:"reattachWait"`
}

// DefaultReattachWait is web.reattachWait's default: longer than a
// crashed host's account lease takes to move (staleAfter, 90 s) plus the
// longest answer the field report saw (6 min 10 s), so a sent task goes
// back to its own conversation after a crash; short enough that an
// account held for an hour does not hold its tasks that long.
const DefaultReattachWait = 10 * time.Minute

// IsHeadless reports the headless setting, default true.
func (w WebConfig) IsHeadless() bool { return w.Headless == nil || *w.Headless }

// ModelConfig is one entry of `models:`.
type ModelConfig struct {
	Name            string            `yaml:"name"`
	Kind            taskfile.Kind     `yaml:"kind"`
	NeedEmptyPrompt bool              `yaml:"needEmptyPrompt"`
	Timeout         Duration          `yaml:"timeout"`
	BaseURL         string            `yaml:"baseURL"`
	Model           string            `yaml:"model"`
	APIKeyEnv       string            `yaml:"apiKeyEnv"`
	Temperature     *float64          `yaml:"temperature"`
	MaxTokens       int               `yaml:"maxTokens"`
	MaxTokensField  string            `yaml:"maxTokensField"` // MaxTokensDefault or MaxCompletionTokens
	Headers         map[string]string `yaml:"headers"`
	// Concurrency and RPM are the vendor's quota for this api model: at
	// most Concurrency of its tasks at once (0: the lane's), at most RPM
	// requests a minute (0: no limit). See lanes.ModelGate.
	Concurrency int     `yaml:"concurrency"`
	RPM         float64 `yaml:"rpm"`
	Site        string  `yaml:"site"`
	// Account pins a web model to one account's session; Accounts to
	// several; neither: any session of its site (see WebSessions).
	Account  string   `yaml:"account"`
	Accounts []string `yaml:"accounts"`
}

// The values of a model's maxTokensField: the request field that carries
// maxTokens. max_tokens is read by every OpenAI-compatible server; OpenAI's
// reasoning models refuse it and read max_completion_tokens.
const (
	MaxTokensDefault    = "max_tokens"
	MaxCompletionTokens = "max_completion_tokens"
)

// SiteConfig describes a chat page by CSS selectors; nothing site-specific
// lives in code.
type SiteConfig struct {
	URL       string `yaml:"url"`
	Input     string `yaml:"input"`
	Send      string `yaml:"send"`
	Answer    string `yaml:"answer"`
	Busy      string `yaml:"busy"`
	LoggedOut string `yaml:"loggedOut"`
	NewChat   string `yaml:"newChat"`
	// Error matches the page's own error message (e.g. "one message at a
	// time"); when it appears the attempt is transient. Optional.
	Error string `yaml:"error"`
	// PromptInput, if set, is a separate field for the system prompt;
	// otherwise the prompt is typed before the content in `input`.
	PromptInput string `yaml:"promptInput"`
	// Quiet is how long the answer must hold still, once busy is gone,
	// before it counts as finished (default 1s). Pages that pause while
	// they stream want more.
	Quiet Duration `yaml:"quiet"`
	// StartTimeout: after send, the page must show `busy` or a new
	// `answer` within this long (default 60s), else the attempt fails as
	// transient with the page's text in the log.
	StartTimeout Duration `yaml:"startTimeout"`
	// Continue, if set, matches a "Continue generating" button: while it
	// shows after an answer, it is clicked and the answer waited for again.
	Continue string `yaml:"continue"`
	// Limited matches the page's usage-limit message; LimitedText are
	// regular expressions (RE2) its text must match (with no Limited, they
	// are matched against the `error` element and the new answer). Either
	// ends the attempt as `account` and holds the account.
	Limited     string   `yaml:"limited"`
	LimitedText []string `yaml:"limitedText"`
	// LimitHold is how long a usage limit holds the account when its
	// message names no reset time (default 1h).
	LimitHold Duration `yaml:"limitHold"`

	// The conversation keys, for sending a prompt once (a later attempt
	// reattaches to the conversation its send went to). Conversation is
	// an RE2 regexp the page's location matches once it shows a
	// conversation (default: any location other than url); UserMessage
	// matches the user's messages in one; History the links to the
	// account's conversations, newest first; NotFound shows when a
	// conversation no longer opens. All optional.
	Conversation string `yaml:"conversation"`
	UserMessage  string `yaml:"userMessage"`
	History      string `yaml:"history"`
	NotFound     string `yaml:"notFound"`

	// How the answer is read and known to have ended (README: "Reading
	// the answer"). Done matches an element that shows only under a
	// finished answer (its action bar, copy or regenerate button): with
	// it (or Network) only proof ends an answer, never `quiet`.
	Done string `yaml:"done"`
	// Copy is the answer's own copy button (the last match is the last
	// answer's); its clipboard write is caught inside the page.
	Copy string `yaml:"copy"`
	// ErrorTurn matches, on or inside the answer, what makes it the
	// site's error turn ("Something went wrong", a Retry button): the
	// attempt fails as transient with its text.
	ErrorTurn string `yaml:"errorTurn"`
	// Chrome lists selectors of UI inside the answer that is not the
	// answer (a code block's language label, "Copy code"), dropped before
	// the answer's HTML becomes Markdown; buttons are always dropped.
	Chrome []string `yaml:"chrome"`
	// Network names the page's own response that carries the answer.
	Network *SiteNetwork `yaml:"network"`
	// Read is the order of the reading methods (network, copy, dom,
	// text); default: every method the keys above allow, best first.
	// text is always the last resort.
	Read []string `yaml:"read"`
}

// ReadMethods are the values of a site's `read:`, best first.
var ReadMethods = []string{"network", "copy", "dom", "text"}

// DefaultLimitHold is a usage limit's hold when the message names no time.
const DefaultLimitHold = time.Hour

// Hold returns the site's limitHold, or its default.
func (s SiteConfig) Hold() time.Duration {
	if s.LimitHold > 0 {
		return s.LimitHold.D()
	}
	return DefaultLimitHold
}

// AccountConf is one entry of `accounts:`.
type AccountConf struct {
	Disabled bool `yaml:"disabled"`
	// Site is the site the account signs in to; it makes the account a
	// web session (see WebSessions).
	Site string `yaml:"site"`
	// Profile is the session's browser profile folder: absolute, or
	// relative to web.profiles. Default: see WebSessions.
	Profile string `yaml:"profile"`
}

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
		switch m.Kind {
		case taskfile.KindAPI:
			if m.BaseURL == "" {
				return &ConfigError{Key: key + ".baseURL", Msg: "missing (an OpenAI-compatible endpoint such as https://api.example.com/v1)"}
			}
			if u, err := url.Parse(m.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return &ConfigError{Key: key + ".baseURL", Msg: fmt.Sprintf("%q is not an http(s) URL", m.BaseURL)}
			}
			if m.Model == "" {
				m.Model = m.Name
			}
			switch m.MaxTokensField {
			case "":
				m.MaxTokensField = MaxTokensDefault
			case MaxTokensDefault, MaxCompletionTokens:
			default:
				return &ConfigError{Key: key + ".maxTokensField", Msg: fmt.Sprintf("%q is not %s (the default) or %s", m.MaxTokensField, MaxTokensDefault, MaxCompletionTokens)}
			}
		case taskfile.KindWeb:
			if m.Site == "" {
				return &ConfigError{Key: key + ".site", Msg: "missing: a web model names one of `sites:`"}
			}
			if _, ok := c.Sites[m.Site]; !ok {
				return &ConfigError{Key: key + ".site", Msg: fmt.Sprintf("%q is not in `sites:`", m.Site)}
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
	if err := c.checkSessions(); err != nil {
		return err
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
	for i, c := range s.Chrome {
		if strings.TrimSpace(c) == "" {
			return &ConfigError{Key: fmt.Sprintf("%s.chrome[%d]", key, i), Msg: "empty selector"}
		}
	}
	return nil
}

// UnmarshalYAML on APIConfig records whether concurrency was given.
func (a *APIConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain APIConfig
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*a = APIConfig(p)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "concurrency" {
			a.set = true
		}
	}
	return nil
}

// Model returns the model named name.
func (c *Config) Model(name string) (*ModelConfig, bool) {
	for i := range c.Models {
		if c.Models[i].Name == name {
			return &c.Models[i], true
		}
	}
	return nil, false
}

// MaxAttempts is the first attempt plus maxRetries.
func (c *Config) MaxAttempts() int { return 1 + *c.MaxRetries }
