package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kardianos/service"

	"github.com/spoolgate/spoolgate/spool/config"
	"github.com/spoolgate/spoolgate/spool/taskfile"
)

func init() {
	register("service", "install|uninstall|start|stop|status: run as a systemd, Windows or launchd service", cmdService)
}

// defaultServiceName is the unit, Windows service and launchd label.
const defaultServiceName = "spoolgate"

// serviceNameEnv carries the installed service's name to `spoolgate run`.
const serviceNameEnv = "SPOOLGATE_SERVICE_NAME"

// systemdRunDir exists exactly when Linux was booted with systemd (this is
// what sd_booted(3) checks). A variable so tests can point it elsewhere.
var systemdRunDir = "/run/systemd/system"

// errNoSystemd is returned by `spoolgate service ...` on a Linux machine that
// does not run systemd.
var errNoSystemd = errors.New("service: this machine does not run systemd (" +
	"no /run/systemd/system), and spoolgate installs itself only as a systemd unit on Linux; " +
	"instead run `spoolgate run --config FILE` under your own supervisor (runit, s6, supervisord, a container's init), " +
	"or adapt install/spoolgate.service from the source tree")

// serviceOptions are the flags of `spoolgate service`, plus what the
// command fills in from the running process so serviceConfig stays pure.
type serviceOptions struct {
	Name   string // service name; default "spoolgate"
	User   string // the account that runs the daemon and owns the browser profile
	Config string // config file; default ./spoolgate.yaml
	Spool  string // --spool, passed on to `run` if given

	Executable string // absolute path of the binary; default os.Executable()
	GOOS       string // target system; default runtime.GOOS
	Password   string // Windows only: the password of User, from the environment
}

// serviceConfig builds what kardianos/service receives to install
// spoolgate as a service: the binary's absolute path, `run --config ABS`
// (a service's working directory is not the operator's, so every path is
// made absolute), the account, the config file's folder as working
// directory, and per-system options. It refuses with a UsageError when the
// config file is missing or does not load: a service that cannot start is
// worse than an install that says why.
func serviceConfig(opts serviceOptions) (*service.Config, error) {
	if opts.Name == "" {
		opts.Name = defaultServiceName
	}
	if !taskfile.ValidASCIIName(opts.Name) {
		return nil, usagef("service: --name %q must be letters, digits, '.', '_' or '-'", opts.Name)
	}
	if opts.GOOS == "" {
		opts.GOOS = runtime.GOOS
	}
	cfgPath := opts.Config
	if cfgPath == "" {
		cfgPath = config.DefaultConfigFile
	}
	abs, err := filepath.Abs(cfgPath)
	if err != nil {
		return nil, usagef("service: config %s: %v", cfgPath, err)
	}
	if st, err := os.Stat(abs); err != nil || st.IsDir() {
		return nil, usagef("service: config file %s does not exist: a service needs one given with --config "+
			"(its working directory is not this one, so defaults cannot be found there)", abs)
	}
	cfg, err := config.LoadConfig(abs)
	if err != nil {
		return nil, usagef("service: %v", err)
	}
	exe := opts.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("service: find the running binary: %w", err)
		}
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
	}
	if !filepath.IsAbs(exe) {
		if exe, err = filepath.Abs(exe); err != nil {
			return nil, fmt.Errorf("service: binary path: %w", err)
		}
	}
	args := []string{"run", "--config", abs}
	if opts.Spool != "" {
		sp, err := filepath.Abs(opts.Spool)
		if err != nil {
			return nil, usagef("service: --spool %s: %v", opts.Spool, err)
		}
		args = append(args, "--spool", sp)
	}

	c := &service.Config{
		Name:        opts.Name,
		DisplayName: "spoolgate",
		Description: "spoolgate: filesystem spool that runs AI generation tasks on a web lane and an API lane",
		Executable:  exe,
		Arguments:   args,
		UserName:    opts.User,
		// Relative paths a task or the config might still hold resolve
		// beside the config, as they do for an operator who runs
		// `spoolgate run` there. Windows ignores this field; runMaybeAsService
		// changes directory there instead, so it is never System32.
		WorkingDirectory: filepath.Dir(abs),
		Option:           service.KeyValue{},
		// runMaybeAsService learns the installed name from here (the
		// event log source on Windows), so `run` needs no flag for it.
		EnvVars: map[string]string{serviceNameEnv: opts.Name},
	}
	if opts.Name != defaultServiceName {
		c.DisplayName = "spoolgate (" + opts.Name + ")"
	}
	switch opts.GOOS {
	case "linux":
		c.Option["Restart"] = "on-failure"
		// A graceful stop (SIGTERM, then shutdownGrace to finish) exits 0,
		// and death by SIGTERM is clean too; systemd assumes both, they
		// are spelled out so nobody adds 1 or 2 here: those must stay
		// failures (1 is restarted, 2 a bad config: see systemdUnit).
		c.Option["SuccessExitStatus"] = "0 SIGTERM"
		// stderr goes to the journal as is: no files under /var/log.
		c.Option["LogOutput"] = false
		c.Option["SystemdScript"] = systemdUnit(cfg.ShutdownGrace.D())
		c.Dependencies = []string{"After=network-online.target", "Wants=network-online.target"}
	case "darwin":
		// KeepAlive restarts it if it exits; RunAtLoad starts it at boot.
		// launchd writes stdout and stderr to /usr/local/var/log/NAME.*.log.
		c.Option["KeepAlive"] = true
		c.Option["RunAtLoad"] = true
	case "windows":
		// Wait for the network and the user profile service after boot,
		// and restart after a crash: runMaybeAsService exits non-zero when
		// the daemon fails on its own, which is what triggers OnFailure.
		c.Option["DelayedAutoStart"] = true
		c.Option["StartType"] = "automatic"
		c.Option["OnFailure"] = "restart"
		c.Option["OnFailureDelayDuration"] = "10s"
		c.Option["OnFailureResetPeriod"] = 3600
		if opts.Password != "" {
			c.Option["Password"] = opts.Password
		}
		// kardianos/service ignores WorkingDirectory on Windows, where a
		// service starts in System32; runMaybeAsService changes to the
		// config file's folder (from --config) instead. Kept here so the
		// intent is visible in one place.
	}
	return c, nil
}

// systemdUnit is the unit kardianos/service renders on systemd: its own
// template (same keys, no new actions) with what spoolgate needs:
//   - KillMode=mixed: SIGTERM reaches only the daemon, which finishes or
//     cancels its running task and closes the browser itself; the browser
//     is not killed under it. Leftovers get SIGKILL at the end.
//   - TimeoutStopSec a bit over shutdownGrace, so systemd waits for it.
//   - RestartPreventExitStatus=2: exit 2 is a bad config; restarting it in
//     a loop only fills the journal, so the unit stays failed and says why.
//   - RestartSec=5 instead of 120: a crash should cost seconds, not minutes.
func systemdUnit(grace time.Duration) string {
	stop := int((grace + 15*time.Second + time.Second - 1) / time.Second)
	return `[Unit]
Description={{Description}}
ConditionFileIsExecutable={{Path | cmdEscape}}
{{range Dependencies}}{{.}}
{{end}}
[Service]
StartLimitInterval=60
StartLimitBurst=5
ExecStart={{Path | cmdEscape}}{{range Arguments}} {{. | cmd}}{{end}}
{{if ChRoot}}RootDirectory={{ChRoot | cmd}}
{{end}}{{if WorkingDirectory}}WorkingDirectory={{WorkingDirectory | cmdEscape}}
{{end}}{{if UserName}}User={{UserName}}
{{end}}{{if LimitNOFILE}}LimitNOFILE={{LimitNOFILE}}
{{end}}{{if Restart}}Restart={{Restart}}
{{end}}{{if SuccessExitStatus}}SuccessExitStatus={{SuccessExitStatus}}
{{end}}RestartSec=5
RestartPreventExitStatus=2
KillSignal=SIGTERM
KillMode=mixed
TimeoutStopSec=` + fmt.Sprint(stop) + `
EnvironmentFile=-/etc/sysconfig/{{Name}}
EnvironmentFile=-/etc/default/{{Name}}

{{range EnvVars}}{{.}}
{{end}}[Install]
WantedBy=multi-user.target
`
}

// cmdService is `spoolgate service ACTION`.
func cmdService(ctx context.Context, env *Env, args []string) error {
	var c common
	flags := newFlags("service", &c)
	user := flags.String("user", "", "account that runs the service and owns the browser profile")
	name := flags.String("name", defaultServiceName, "service name")
	pos, err := parseInterspersed(flags, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: spoolgate service install|uninstall|start|stop|status [--user NAME] [--name spoolgate] [--config FILE] [--spool DIR]")
	}
	action := pos[0]
	switch action {
	case "install", "uninstall", "start", "stop", "status":
	default:
		return usagef("service: unknown action %q: want install, uninstall, start, stop or status", action)
	}
	if err := checkServiceSystem(runtime.GOOS); err != nil {
		return err
	}

	var sc *service.Config
	if action == "install" {
		opts := serviceOptions{Name: *name, User: *user, Config: c.config, Spool: c.spool}
		if runtime.GOOS == "windows" && env.Getenv != nil {
			// Never a flag: it would show in the process list.
			opts.Password = env.Getenv("SPOOLGATE_SERVICE_PASSWORD")
		}
		if sc, err = serviceConfig(opts); err != nil {
			return err
		}
	} else {
		// The other actions address the installed service by name only.
		if !taskfile.ValidASCIIName(*name) {
			return usagef("service: --name %q must be letters, digits, '.', '_' or '-'", *name)
		}
		sc = &service.Config{Name: *name}
	}
	s, err := service.New(noopProgram{}, sc)
	if err != nil {
		return fmt.Errorf("service: %w", err)
	}

	if action == "status" {
		st, err := s.Status()
		switch {
		case errors.Is(err, service.ErrNotInstalled):
			fmt.Fprintln(env.Stdout, "not installed")
			return nil
		case err != nil:
			return fmt.Errorf("service status: %w", err)
		case st == service.StatusRunning:
			fmt.Fprintln(env.Stdout, "running")
		case st == service.StatusStopped:
			fmt.Fprintln(env.Stdout, "stopped")
		default:
			return fmt.Errorf("service status: unknown (%s)", s.Platform())
		}
		return nil
	}

	var do func() error
	switch action {
	case "install":
		do = s.Install
	case "uninstall":
		do = s.Uninstall
	case "start":
		do = s.Start
	case "stop":
		do = s.Stop
	}
	if err := do(); err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("service %s %s: %w (run it as root, or as Administrator on Windows)", action, sc.Name, err)
		}
		return fmt.Errorf("service %s %s (%s): %w", action, sc.Name, s.Platform(), err)
	}
	switch action {
	case "install":
		fmt.Fprintf(env.Stdout, "installed %s (%s): %s %s\n", sc.Name, s.Platform(), sc.Executable, strings.Join(sc.Arguments, " "))
		if kp, created, err := installKey(c.config, *user); err != nil {
			fmt.Fprintf(env.Stderr, "spoolgate: installation key: %v (the daemon creates it at its first start)\n", err)
		} else if created {
			fmt.Fprintf(env.Stdout, "installation key created: %s (mode 0600): copy it beside the config of every other host of this spool\n", kp)
		} else {
			fmt.Fprintf(env.Stdout, "installation key: %s\n", kp)
		}
		fmt.Fprintf(env.Stdout, "start it with: spoolgate service start --name %s\n", sc.Name)
	default:
		fmt.Fprintf(env.Stdout, "%s: %s done\n", sc.Name, action)
	}
	return nil
}

// checkServiceSystem refuses Linux without systemd. kardianos/service would
// fall back to upstart, OpenRC or a SysV script there; spoolgate does not,
// on purpose: those scripts neither restart a crashed daemon nor wait for a
// graceful stop (SIGTERM, then shutdownGrace while the browser closes), and
// they send its log to files nobody watches. Such systems, and containers,
// run `spoolgate run` under their own supervisor instead.
func checkServiceSystem(goos string) error {
	if goos != "linux" {
		return nil
	}
	if _, err := os.Stat(systemdRunDir); err != nil {
		return errNoSystemd
	}
	if p := service.Platform(); p != "linux-systemd" {
		return fmt.Errorf("%w (service library chose %q)", errNoSystemd, p)
	}
	return nil
}

// noopProgram is the service.Interface for the control actions, which never
// call Run.
type noopProgram struct{}

func (noopProgram) Start(service.Service) error { return nil }
func (noopProgram) Stop(service.Service) error  { return nil }
