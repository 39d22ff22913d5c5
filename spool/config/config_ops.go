package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
	"gopkg.in/yaml.v3"
)

// Event names of `notify:`. The payload of each is documented in docs/operators.md
// ("Notifications").
const (
	EventBatchFinished    = "batch.finished"
	EventTaskFailed       = "task.failed"
	EventAccountHeld      = "account.held"
	EventAccountReleased  = "account.released"
	EventAccountLoggedOut = "account.loggedOut"
	EventLaneStandby      = "lane.standby"
	// EventAccountChallenge: a page showed a challenge (a captcha, a
	// slider, "Just a moment..."): the account is held until cleared.
	EventAccountChallenge = "account.challenge"
)

// Events lists every event spoolgate sends, in a fixed order.
var Events = []string{EventBatchFinished, EventTaskFailed, EventAccountHeld, EventAccountReleased, EventAccountLoggedOut, EventAccountChallenge, EventLaneStandby}

// NotifyConfig is `notify:`: who is told about events, and how.
type NotifyConfig struct {
	// Command runs once per event with the event's JSON on stdin.
	Command Command `yaml:"command"`
	// Webhook receives a POST of the same JSON.
	Webhook string            `yaml:"webhook"`
	Headers map[string]string `yaml:"headers"`
	// Timeout bounds one run of the command and one webhook request
	// (default 30s); a command still running then is killed.
	Timeout Duration `yaml:"timeout"`
	// Retries after a failed delivery (default 5), RetryBackoff apart at
	// first (default 2s), doubling.
	Retries      *int     `yaml:"retries"`
	RetryBackoff Duration `yaml:"retryBackoff"`
	// Events to send; default all of Events.
	Events []string `yaml:"events"`
}

// Command is a program and its arguments: a YAML list, or a string that
// names the program alone (no shell: arguments are never split).
type Command []string

// UnmarshalYAML reads a string or a list of strings.
func (c *Command) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*c = Command{n.Value}
		return nil
	case yaml.SequenceNode:
		var l []string
		if err := n.Decode(&l); err != nil {
			return err
		}
		*c = l
		return nil
	}
	return fmt.Errorf("line %d: want a program path or a list [program, arg, ...]", n.Line)
}

// Enabled reports whether anyone is to be told anything.
func (n *NotifyConfig) Enabled() bool { return len(n.Command) > 0 || n.Webhook != "" }

// Wants reports whether event is sent.
func (n *NotifyConfig) Wants(event string) bool {
	return n.Enabled() && (len(n.Events) == 0 || slices.Contains(n.Events, event))
}

func (n *NotifyConfig) check() error {
	if n.Timeout == 0 {
		n.Timeout = Duration(30 * time.Second)
	}
	if n.RetryBackoff == 0 {
		n.RetryBackoff = Duration(2 * time.Second)
	}
	if n.Retries == nil {
		five := 5
		n.Retries = &five
	}
	if *n.Retries < 0 || *n.Retries > 20 {
		return &ConfigError{Key: "notify.retries", Msg: fmt.Sprintf("%d is out of range 0 to 20", *n.Retries)}
	}
	if len(n.Command) > 0 && strings.TrimSpace(n.Command[0]) == "" {
		return &ConfigError{Key: "notify.command", Msg: "the program is empty"}
	}
	if n.Webhook != "" {
		if u, err := url.Parse(n.Webhook); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &ConfigError{Key: "notify.webhook", Msg: fmt.Sprintf("%q is not an http(s) URL", n.Webhook)}
		}
	}
	for _, e := range n.Events {
		if !slices.Contains(Events, e) {
			return &ConfigError{Key: "notify.events", Msg: fmt.Sprintf("%q is not an event (known: %s)", e, strings.Join(Events, ", "))}
		}
	}
	return nil
}

// RetentionConfig is `retention:`: how long finished tasks stay in their
// lane's done/, failed/ and canceled/ before the daemon moves them to the
// lane's archive/. Zero keeps them for ever (the default).
type RetentionConfig struct {
	Done     Duration `yaml:"done"`
	Failed   Duration `yaml:"failed"`
	Canceled Duration `yaml:"canceled"`
}

// For returns the retention of the final folder dir; 0 keeps for ever.
func (r RetentionConfig) For(dir string) time.Duration {
	switch dir {
	case taskfile.DirDone:
		return r.Done.D()
	case taskfile.DirFailed:
		return r.Failed.D()
	case taskfile.DirCanceled:
		return r.Canceled.D()
	}
	return 0
}

// Shortest is the shortest retention set, or 0 if none is.
func (r RetentionConfig) Shortest() time.Duration {
	var m time.Duration
	for _, d := range []time.Duration{r.Done.D(), r.Failed.D(), r.Canceled.D()} {
		if d > 0 && (m == 0 || d < m) {
			m = d
		}
	}
	return m
}

// checkOps fills the defaults of the daily-operations keys and checks them.
func (c *Config) checkOps() error {
	if c.AgingAfter == 0 {
		c.AgingAfter = Duration(time.Hour)
	}
	for _, m := range c.Models {
		key := fmt.Sprintf("models[%s]", m.Name)
		switch {
		case m.Concurrency < 0:
			return &ConfigError{Key: key + ".concurrency", Msg: fmt.Sprintf("%d is negative", m.Concurrency)}
		case m.RPM < 0 || m.RPM > 1e6:
			return &ConfigError{Key: key + ".rpm", Msg: fmt.Sprintf("%g is out of range 0 to 1000000", m.RPM)}
		case m.Kind != taskfile.KindAPI && (m.Concurrency != 0 || m.RPM != 0):
			return &ConfigError{Key: key, Msg: "concurrency and rpm are quotas of api models (a web session runs one task at a time)"}
		case m.Concurrency > c.API.Concurrency:
			return &ConfigError{Key: key + ".concurrency", Msg: fmt.Sprintf("%d is over api.concurrency (%d): a model cannot run more than the lane", m.Concurrency, c.API.Concurrency)}
		}
	}
	return c.Notify.check()
}
