// This file holds the shape of spoolgate.yaml: the Config type and its
// sections (api, web, models, sites, accounts) with their small accessors.

// Package config is spoolgate.yaml: parsed strictly, defaulted and
// checked, with the timings derived from it and the web sessions it
// declares. It imports the task format (taskfile) only.
package config

import (
	"slices"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
	"gopkg.in/yaml.v3"
)

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
	Tokens        map[string]TokenConfig `yaml:"tokens"` // the HTTP front door's (door.go)
	Door          DoorConfig             `yaml:"door"`
	Console       ConsoleConfig          `yaml:"console"`
	Artifacts     ArtifactsConfig        `yaml:"artifacts"`   // generated files (artifacts.go)
	Attachments   AttachmentsConfig      `yaml:"attachments"` // a task's files (attachments.go)

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
	// Warm keeps each session's browser between tasks (see WarmConfig).
	Warm WarmConfig `yaml:"warm"`
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
	// KeepReasoning: a reasoning model's thinking is kept in the task
	// file's `reasoning` (default true); false drops it.
	KeepReasoning *bool `yaml:"keepReasoning"`
	// Modes (web) are the page modes the model runs in, each a mode its
	// site's `modes:` maps to a switch (on or off) or a menu (the label to
	// choose): {deepThink: on, search: off}. Each is set and read back
	// before every send.
	Modes map[string]string `yaml:"modes"`
	// Endpoint (api) is EndpointChat (default) or EndpointImages: the
	// task's content is a prompt for OpenAI's images API and the answer
	// is the pictures, kept as artifacts (see ArtifactsConfig).
	Endpoint string `yaml:"endpoint"`
	// Vision (api): the model reads images, sent as image_url parts; an
	// api model without it takes text attachments only.
	Vision bool `yaml:"vision"`
	// ImageHosts (api, endpoint images) are the hosts besides the base
	// URL's that a picture url may point at (the vendor's storage, as
	// files.vendor.example): any other is refused (issue 49).
	ImageHosts []string `yaml:"imageHosts"`
	// RequestFields (api) are the sampling fields a task (or a front-door
	// request) may set for itself: temperature, topP, maxTokens, stop,
	// seed, reasoningEffort. Any other a task sets is refused by name.
	RequestFields []string `yaml:"requestFields"`
	// Price (api) turns the tokens its API reports into a cost, per
	// batch and lane in status: what a million prompt (input) and
	// completion (output) tokens cost, in whatever currency the team
	// counts in.
	Price *Price `yaml:"price"`
	// Tokenizer is the BPE vocabulary a web answer's tokens are counted
	// with (its page reports none): TokenizerO200k (the default) or
	// TokenizerCl100k. See modelkeys.go.
	Tokenizer string `yaml:"tokenizer"`
	// SchemaMode (api) is how a task's schema reaches the model:
	// SchemaInstruction (the default: told after the prompt) or
	// SchemaNative (the endpoint takes response_format).
	SchemaMode string `yaml:"schemaMode"`
}

// Price is a model's price per million tokens.
type Price struct {
	Input  float64 `yaml:"input"`
	Output float64 `yaml:"output"`
	// Cached is the price of a prompt token read from the vendor's
	// prompt cache (usage's cached_tokens); nil: the input price.
	Cached *float64 `yaml:"cached"`
}

// Of is what usage u costs at p.
func (p *Price) Of(u taskfile.Usage) float64 {
	in := float64(u.PromptTokens) * p.Input
	if p.Cached != nil {
		in += float64(u.CachedTokens) * (*p.Cached - p.Input)
	}
	return (in + float64(u.CompletionTokens)*p.Output) / 1e6
}

// AllowsField reports whether a task may set the sampling field name
// for this model (its requestFields).
func (m *ModelConfig) AllowsField(name string) bool { return slices.Contains(m.RequestFields, name) }

// KeepsReasoning reports the keepReasoning setting, default true.
func (m ModelConfig) KeepsReasoning() bool { return m.KeepReasoning == nil || *m.KeepReasoning }

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
	// Pace is the default pace of the site's accounts (pace.go).
	Pace *Pace `yaml:"pace"`
	// Challenge matches the site's own challenge page or widget (a
	// captcha, a slider, a "checking your browser" page), beside the
	// built-in ones (Cloudflare, hCaptcha, reCAPTCHA, GeeTest, 安全验证...):
	// a page that shows one holds the account until an operator clears it.
	// spoolgate never tries to solve one.
	Challenge string `yaml:"challenge"`
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
	// answer, dropped before it is read, for what no rule can know:
	// buttons, toolbars, hidden elements, unselectable labels and a code
	// block's header are always dropped.
	Chrome []string `yaml:"chrome"`
	// Network names the page's own response that carries the answer.
	Network *SiteNetwork `yaml:"network"`
	// Read is the order of the reading methods (network, copy, dom,
	// text); default: every method the keys above allow, best first.
	// text is always the last resort.
	Read []string `yaml:"read"`
	// Verify is what a result that differs from the answer the page
	// showed does: "" or "mark" records resultCheck: differs and keeps the
	// result; "strict" fails the attempt as transient instead; "off" does
	// not compare (resultCheck: unchecked), for a page whose rendering no
	// text can match (math drawn as glyphs).
	Verify string `yaml:"verify"`
	// Artifacts matches, inside the answer, elements whose files the
	// answer generated beyond its <img> and a[download] links (a card
	// with data-url, a <video>): each is fetched through the page's own
	// session (README: "Generated files").
	Artifacts string `yaml:"artifacts"`
	// ArtifactsFrom are where the site keeps the files its answers
	// generate: URL prefixes, absolute (https://files.example.com/) or a
	// path on the site's origin (/backend-api/estuary/). Only an address
	// under one of them is fetched with the account's session; without
	// the key nothing of the site's own origin is, but what the page made
	// itself (blob:, data:). Other origins are fetched with no
	// credentials. Text, JSON or HTML from the session is kept only from
	// a prefix that names its path exactly (issue 49; README: "Generated
	// files").
	ArtifactsFrom []string `yaml:"artifactsFrom"`
	// Thinking matches a reasoning model's thinking block (已深度思考,
	// "Thought for 8 s"): never part of the answer, read into the task's
	// `reasoning`. Without it, a block the page marks as thinking (a
	// details/summary pair or a toggle labelled 思考, Thinking or Thought
	// beside it) is found by itself.
	Thinking string `yaml:"thinking"`
	// Modes maps each page mode a model may name (deepThink, search,
	// model...) to the page's control for it.
	Modes map[string]SiteMode `yaml:"modes"`
	// Upload is the page's file input (input[type=file]) or the button
	// that opens one; Attached matches the attachment chips or thumbnails
	// the page shows for the files it holds (browser/upload.go).
	Upload   string `yaml:"upload"`
	Attached string `yaml:"attached"`
}

// SiteMode is a page mode's control: a switch (Switch, whose state State
// says how to read) or a menu (Menu opens it, Option are its choices,
// Chosen shows the chosen label; default Menu itself).
type SiteMode struct {
	// Switch is the toggle's selector; State how its state reads:
	// aria-pressed, aria-checked (true is on) or class:NAME (on while the
	// element has the class NAME).
	Switch string `yaml:"switch"`
	State  string `yaml:"state"`
	// Menu is the button that opens the menu; Option matches its choices
	// (the one whose text is the model's value is clicked); Chosen shows
	// the chosen label once the menu is closed (default: Menu).
	Menu   string `yaml:"menu"`
	Option string `yaml:"option"`
	Chosen string `yaml:"chosen"`
}

// The values of a switch mode in a model's `modes:`.
const (
	ModeOn  = "on"
	ModeOff = "off"
)

// Verify's values.
const (
	VerifyMark   = "mark"
	VerifyStrict = "strict"
	VerifyOff    = "off"
)

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
	// Proxy is the proxy the account's browser, and only it, goes
	// through: http://, https:// or socks5:// host:port, credentials
	// allowed (never logged or shown: see RedactProxy).
	Proxy string `yaml:"proxy"`
	// Pace is how often the account may send (pace.go); default its
	// site's pace, else none.
	Pace *Pace `yaml:"pace"`
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
