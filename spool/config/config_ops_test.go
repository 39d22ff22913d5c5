package config

import (
	"strings"
	"testing"
	"time"

	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func TestConfig_Ops(t *testing.T) {
	for _, tc := range []struct {
		name, in, wantErr string
		check             func(*Config) string
	}{
		{"defaults: nothing sent, nothing archived", "", "", func(c *Config) string {
			if c.Notify.Enabled() || c.Notify.Wants(EventTaskFailed) || c.Retention.Shortest() != 0 {
				return "notify or retention on by default"
			}
			return ""
		}},
		{"command as a string", "notify: {command: /usr/local/bin/on-event}\n", "", func(c *Config) string {
			if len(c.Notify.Command) != 1 || c.Notify.Command[0] != "/usr/local/bin/on-event" || !c.Notify.Wants(EventBatchFinished) {
				return "command not read"
			}
			if c.Notify.Timeout.D() != 30*time.Second || *c.Notify.Retries != 5 || c.Notify.RetryBackoff.D() != 2*time.Second {
				return "defaults not filled"
			}
			return ""
		}},
		{"command as a list, events filtered", "notify: {command: [notify-send, -u, low], events: [task.failed]}\n", "", func(c *Config) string {
			if len(c.Notify.Command) != 3 || c.Notify.Wants(EventBatchFinished) || !c.Notify.Wants(EventTaskFailed) {
				return "list or events not read"
			}
			return ""
		}},
		{"retention in days", "retention: {done: 30d, failed: 90d}\n", "", func(c *Config) string {
			if c.Retention.For(taskfile.DirDone) != 30*24*time.Hour || c.Retention.For(taskfile.DirFailed) != 90*24*time.Hour ||
				c.Retention.For(taskfile.DirCanceled) != 0 || c.Retention.Shortest() != 30*24*time.Hour {
				return "retention not read"
			}
			return ""
		}},
		{"model quotas", "api: {concurrency: 5}\nmodels: [{name: a, kind: api, baseURL: 'http://x/v1', concurrency: 2, rpm: 30}]\n", "", func(c *Config) string {
			if m, _ := c.Model("a"); m.Concurrency != 2 || m.RPM != 30 {
				return "quotas not read"
			}
			if c.AgingAfter.D() != time.Hour {
				return "agingAfter default"
			}
			return ""
		}},
		{"model concurrency over the lane's", "models: [{name: a, kind: api, baseURL: 'http://x/v1', concurrency: 4}]\n", "models[a].concurrency: 4 is over api.concurrency (3)", nil},
		{"negative rpm", "models: [{name: a, kind: api, baseURL: 'http://x/v1', rpm: -1}]\n", "models[a].rpm", nil},
		{"quota on a web model", "models: [{name: w, kind: web, site: s, concurrency: 1}]\nsites: {s: {url: 'http://x', input: t, send: b, answer: a}}\n", "quotas of api models", nil},
		{"bad webhook", "notify: {webhook: 'ftp://x'}\n", "notify.webhook", nil},
		{"unknown event", "notify: {webhook: 'http://127.0.0.1:1/', events: [batch.done]}\n", `notify.events: "batch.done" is not an event`, nil},
		{"empty program", "notify: {command: ['']}\n", "notify.command", nil},
		{"retries", "notify: {retries: 21}\n", "notify.retries", nil},
		{"bad retention", "retention: {done: 30 days}\n", "not a duration", nil},
		{"negative retention", "retention: {done: -1d}\n", "negative", nil},
		{"unknown retention key", "retention: {archive: 1d}\n", "retention.archive: line 1: unknown key", nil},
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
			if msg := tc.check(c); msg != "" {
				t.Error(msg)
			}
		})
	}
}
