// Package install_test checks that the example files in install/ are what
// they claim: configs spoolgate accepts and a unit consistent with them.
package install_test

import (
	"github.com/spoolgate/spoolgate/spool/config"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExampleConfig(t *testing.T) {
	c, err := config.ParseConfig([]byte(read(t, "spoolgate.yaml")))
	if err != nil {
		t.Fatalf("install/spoolgate.yaml: %v", err)
	}
	if c.Spool != "/srv/spoolgate/spool" || c.Web.Profiles != "/var/lib/spoolgate/profiles" {
		t.Errorf("spool %q, profiles %q: the unit's comments name /srv/spoolgate and /var/lib/spoolgate", c.Spool, c.Web.Profiles)
	}
	if !c.Web.IsHeadless() {
		t.Error("a service's browser must be headless")
	}
	for _, name := range []string{"writer", "thinker-web"} {
		if _, ok := c.Model(name); !ok {
			t.Errorf("model %q missing", name)
		}
	}
}

// The Windows script writes its config from a here-string; it must parse too.
func TestWindowsScriptConfig(t *testing.T) {
	ps := read(t, "install-windows.ps1")
	m := regexp.MustCompile(`(?s)@'\r?\n(.*?)\r?\n'@`).FindStringSubmatch(ps)
	if m == nil {
		t.Fatal("no @' '@ config here-string in install-windows.ps1")
	}
	c, err := config.ParseConfig([]byte(m[1]))
	if err != nil {
		t.Fatalf("install-windows.ps1 config: %v", err)
	}
	if !c.Web.IsHeadless() {
		t.Error("a Windows service runs in session 0: web.headless must be true")
	}
	for _, want := range []string{`"service", "install"`, `"service", "start"`, `"service", "status"`, `"status", "--config"`} {
		if !strings.Contains(ps, want) {
			t.Errorf("install-windows.ps1 does not run %s", want)
		}
	}
}

func TestSystemdUnit(t *testing.T) {
	unit := read(t, "spoolgate.service")
	c, err := config.ParseConfig([]byte(read(t, "spoolgate.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, line := range strings.Split(unit, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			keys[k] = v
		}
	}
	for k, want := range map[string]string{
		"ExecStart":        "/usr/local/bin/spoolgate run --config /etc/spoolgate/spoolgate.yaml",
		"WorkingDirectory": "/etc/spoolgate",
		"User":             "spoolgate",
		"Restart":          "on-failure",
		"KillSignal":       "SIGTERM",
		"KillMode":         "mixed",
	} {
		if keys[k] != want {
			t.Errorf("%s=%q, want %q", k, keys[k], want)
		}
	}
	stop, err := strconv.Atoi(keys["TimeoutStopSec"])
	if err != nil {
		t.Fatalf("TimeoutStopSec=%q: %v", keys["TimeoutStopSec"], err)
	}
	if d := time.Duration(stop) * time.Second; d < c.ShutdownGrace.D()+10*time.Second {
		t.Errorf("TimeoutStopSec %s leaves no room after shutdownGrace %s", d, c.ShutdownGrace.D())
	}
	// Each of these breaks Chromium; see the unit's comments.
	for _, k := range []string{"MemoryDenyWriteExecute", "RestrictNamespaces", "PrivateUsers", "SystemCallFilter", "ProtectHome"} {
		if _, ok := keys[k]; ok {
			t.Errorf("%s is set: Chromium does not run under it", k)
		}
	}
}
