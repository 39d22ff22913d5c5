package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// daemon is the `spoolgate run` subprocess.
type daemon struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{}
	err     error // the exit status, once exited is closed
}

func startDaemon(ctx context.Context, bin, cfgPath, logPath, key, httpAddr string) (*daemon, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "run", "--config", cfgPath)
	cmd.Env = append(os.Environ(), "DEMO_API_KEY="+key)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start the daemon: %w", err)
	}
	d := &daemon{cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		logf.Close()
		close(d.exited)
	}()
	// Ready when its status API answers.
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-d.exited:
			return nil, fmt.Errorf("the daemon exited at start (%v); its log:\n%s", d.err, tail(logPath, 20))
		default:
		}
		resp, err := http.Get("http://" + httpAddr + "/api/status")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return d, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_ = d.stop(15 * time.Second)
			return nil, fmt.Errorf("the daemon's status API at %s did not answer within 20s; its log:\n%s", httpAddr, tail(logPath, 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits up to grace for the daemon to exit; past
// that it kills it and reports so.
func (d *daemon) stop(grace time.Duration) error {
	select {
	case <-d.exited:
		return d.exitErr()
	default:
	}
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("SIGTERM: %w", err)
	}
	select {
	case <-d.exited:
		return d.exitErr()
	case <-time.After(grace):
		_ = d.cmd.Process.Kill()
		<-d.exited
		return fmt.Errorf("the daemon did not exit within %s of SIGTERM: killed", grace)
	}
}

func (d *daemon) exitErr() error {
	if d.err != nil {
		return fmt.Errorf("the daemon exited with %v; the end of its log:\n%s", d.err, tail(d.logPath, 15))
	}
	return nil
}

func tail(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}
