package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kardianos/service"
)

func writeServiceTestFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestServiceConfig(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "etc", "spoolgate.yaml")
	writeServiceTestFile(t, cfgPath, "shutdownGrace: 45s\npoll: true\n")
	// A relative --config must come out absolute.
	t.Chdir(filepath.Join(dir, "etc"))

	exe := filepath.Join(dir, "bin", "spoolgate")
	wantArgs := []string{"run", "--config", cfgPath}
	tests := []struct {
		name     string
		opts     serviceOptions
		wantName string
		wantArgs []string
		wantUser string
		wantDeps bool
		options  map[string]any
		absent   []string // options that must not be set
	}{
		{
			name:     "linux defaults",
			opts:     serviceOptions{Config: "spoolgate.yaml", Executable: exe, GOOS: "linux"},
			wantName: "spoolgate",
			wantArgs: wantArgs,
			wantDeps: true,
			options:  map[string]any{"Restart": "on-failure", "SuccessExitStatus": "0 SIGTERM", "LogOutput": false},
			absent:   []string{"KeepAlive", "DelayedAutoStart", "Password"},
		},
		{
			name:     "linux user, name and spool",
			opts:     serviceOptions{Name: "sg2", User: "ops", Config: cfgPath, Spool: "../spool", Executable: exe, GOOS: "linux"},
			wantName: "sg2",
			wantArgs: append(slices.Clone(wantArgs), "--spool", filepath.Join(dir, "spool")),
			wantUser: "ops",
			wantDeps: true,
			options:  map[string]any{"Restart": "on-failure"},
		},
		{
			name:     "default config file in the working directory",
			opts:     serviceOptions{Executable: exe, GOOS: "linux"},
			wantName: "spoolgate",
			wantArgs: wantArgs,
			wantDeps: true,
		},
		{
			name:     "darwin",
			opts:     serviceOptions{Config: cfgPath, User: "ops", Executable: exe, GOOS: "darwin"},
			wantName: "spoolgate",
			wantArgs: wantArgs,
			wantUser: "ops",
			options:  map[string]any{"KeepAlive": true, "RunAtLoad": true},
			absent:   []string{"Restart", "SystemdScript", "DelayedAutoStart"},
		},
		{
			name:     "windows",
			opts:     serviceOptions{Config: cfgPath, User: `.\ops`, Password: "pw", Executable: exe, GOOS: "windows"},
			wantName: "spoolgate",
			wantArgs: wantArgs,
			wantUser: `.\ops`,
			options:  map[string]any{"DelayedAutoStart": true, "OnFailure": "restart", "StartType": "automatic", "Password": "pw"},
			absent:   []string{"Restart", "SystemdScript", "KeepAlive"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := serviceConfig(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if c.Name != tt.wantName {
				t.Errorf("Name = %q, want %q", c.Name, tt.wantName)
			}
			if c.DisplayName == "" || c.Description == "" {
				t.Errorf("DisplayName %q, Description %q: want both", c.DisplayName, c.Description)
			}
			if c.EnvVars[serviceNameEnv] != tt.wantName {
				t.Errorf("EnvVars = %v, want %s=%s", c.EnvVars, serviceNameEnv, tt.wantName)
			}
			if c.Executable != exe {
				t.Errorf("Executable = %q, want %q", c.Executable, exe)
			}
			if !slices.Equal(c.Arguments, tt.wantArgs) {
				t.Errorf("Arguments = %q, want %q", c.Arguments, tt.wantArgs)
			}
			if c.UserName != tt.wantUser {
				t.Errorf("UserName = %q, want %q", c.UserName, tt.wantUser)
			}
			if c.WorkingDirectory != filepath.Dir(cfgPath) {
				t.Errorf("WorkingDirectory = %q, want %q", c.WorkingDirectory, filepath.Dir(cfgPath))
			}
			if tt.wantDeps != slices.Contains(c.Dependencies, "After=network-online.target") {
				t.Errorf("Dependencies = %q", c.Dependencies)
			}
			for k, v := range tt.options {
				if got, ok := c.Option[k]; !ok || got != v {
					t.Errorf("Option[%s] = %v (set %v), want %v", k, got, ok, v)
				}
			}
			for _, k := range tt.absent {
				if v, ok := c.Option[k]; ok {
					t.Errorf("Option[%s] = %v, want unset", k, v)
				}
			}
			if tt.opts.GOOS == "linux" {
				unit, _ := c.Option["SystemdScript"].(string)
				// shutdownGrace 45s in the config, plus 15s.
				for _, line := range []string{"TimeoutStopSec=60\n", "KillMode=mixed\n", "KillSignal=SIGTERM\n", "RestartPreventExitStatus=2\n"} {
					if !strings.Contains(unit, line) {
						t.Errorf("systemd unit lacks %q:\n%s", line, unit)
					}
				}
			}
		})
	}
}

func TestServiceConfig_Defaults(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "spoolgate.yaml")
	writeServiceTestFile(t, cfgPath, "")
	c, err := serviceConfig(serviceOptions{Config: cfgPath})
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	if !filepath.IsAbs(c.Executable) || filepath.Base(c.Executable) != filepath.Base(self) {
		t.Errorf("Executable = %q, want the absolute path of %q", c.Executable, self)
	}
}

func TestServiceConfig_Refuses(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	writeServiceTestFile(t, bad, "nosuchkey: 1\n")
	t.Chdir(dir) // no spoolgate.yaml here
	tests := []struct {
		name string
		opts serviceOptions
		want string
	}{
		{"missing file", serviceOptions{Config: filepath.Join(dir, "none.yaml")}, "does not exist"},
		{"no default file", serviceOptions{}, "does not exist"},
		{"a folder", serviceOptions{Config: dir}, "does not exist"},
		{"bad config", serviceOptions{Config: bad}, "nosuchkey"},
		{"bad name", serviceOptions{Config: bad, Name: "a b"}, "--name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serviceConfig(tt.opts)
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want a UsageError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to mention %q", err, tt.want)
			}
		})
	}
}

// The systemd unit is rendered by kardianos/service's own small template
// engine at install time; an action it does not know fails only then. So
// the unit may use only the actions its built-in systemd template uses.
func TestSystemdUnit_Actions(t *testing.T) {
	known := map[string]bool{
		"Description": true, "Path | cmdEscape": true, "range Dependencies": true, ".": true,
		"end": true, "range Arguments": true, ". | cmd": true, "if ChRoot": true, "ChRoot | cmd": true,
		"if WorkingDirectory": true, "WorkingDirectory | cmdEscape": true, "if UserName": true,
		"UserName": true, "if LimitNOFILE": true, "LimitNOFILE": true, "if Restart": true,
		"Restart": true, "if SuccessExitStatus": true, "SuccessExitStatus": true, "Name": true,
		"range EnvVars": true,
	}
	unit := systemdUnit(30 * time.Second)
	acts := regexp.MustCompile(`\{\{(.*?)\}\}`).FindAllStringSubmatch(unit, -1)
	if len(acts) < 10 {
		t.Fatalf("only %d actions in the unit", len(acts))
	}
	for _, a := range acts {
		if !known[strings.TrimSpace(a[1])] {
			t.Errorf("unknown template action {{%s}}", a[1])
		}
	}
	if strings.Count(unit, "{{") != len(acts) || strings.Count(unit, "}}") != len(acts) {
		t.Errorf("unbalanced braces in the unit")
	}
	if !strings.Contains(unit, "TimeoutStopSec=45\n") {
		t.Errorf("grace 30s: want TimeoutStopSec=45 in\n%s", unit)
	}
}

func TestCmdService_NoSystemd(t *testing.T) {
	if runtime.GOOS != "linux" {
		// Elsewhere the actions would really reach the service manager.
		t.Skip("the systemd check applies to Linux only")
	}
	// Point the check at a folder that does not exist, so this test also
	// runs (and never installs anything) on a machine with systemd.
	old := systemdRunDir
	systemdRunDir = filepath.Join(t.TempDir(), "no-systemd")
	t.Cleanup(func() { systemdRunDir = old })

	cfgPath := filepath.Join(t.TempDir(), "spoolgate.yaml")
	writeServiceTestFile(t, cfgPath, "")
	for _, action := range []string{"install", "uninstall", "start", "stop", "status"} {
		t.Run(action, func(t *testing.T) {
			var out, errb bytes.Buffer
			env := &Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
			err := run(context.Background(), []string{"service", action, "--config", cfgPath, "--user", "ops"}, env)
			if !errors.Is(err, errNoSystemd) {
				t.Fatalf("err = %v, want errNoSystemd", err)
			}
			if code := exitCode(err, &errb); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			msg := errb.String()
			for _, want := range []string{"does not run systemd", "/run/systemd/system", "spoolgate run --config", "install/spoolgate.service"} {
				if !strings.Contains(msg, want) {
					t.Errorf("stderr %q lacks %q", msg, want)
				}
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
		})
	}
}

func TestCmdService_Usage(t *testing.T) {
	for _, args := range [][]string{{"service"}, {"service", "reboot"}, {"service", "start", "stop"}, {"service", "status", "--bogus"}} {
		var out, errb bytes.Buffer
		err := run(context.Background(), args, &Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: err = %v, want a UsageError", args, err)
		}
	}
}

func TestServiceWorkDir(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "conf", "spoolgate.yaml")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--config", abs}, filepath.Dir(abs)},
		{[]string{"run", "--config=" + abs, "--spool", "/x"}, filepath.Dir(abs)},
		{[]string{"run", "-config", abs}, filepath.Dir(abs)},
		{[]string{"run", "--config", "rel.yaml"}, ""},
		{[]string{"run", "--config"}, ""},
		{[]string{"run"}, ""},
		{[]string{"run", "--", "--config", abs}, ""},
	}
	for _, tt := range tests {
		if got := serviceWorkDir(tt.args); got != tt.want {
			t.Errorf("serviceWorkDir(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestRunMaybeAsService_Interactive(t *testing.T) {
	if !service.Interactive() {
		t.Skip("the test process looks started by a service manager")
	}
	want := errors.New("boom")
	ctx := context.WithValue(context.Background(), struct{}{}, "mark")
	err := runMaybeAsService(ctx, "spoolgate-test", &bytes.Buffer{}, time.Second, func(got context.Context) error {
		if got.Value(struct{}{}) != "mark" {
			t.Error("fn did not get the caller's context")
		}
		return want
	})
	if err != want {
		t.Errorf("err = %v, want %v", err, want)
	}
}
